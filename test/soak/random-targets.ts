// Targets the way authors write them: by label, by expression, by name (also names not created
// yet), by pattern, everything; sometimes with exclusions. Never a name both included and excluded
// (admission refuses it).
import { GROUP_LABEL, namespaceName, TIER_LABEL, type Model } from './model.js';
import type { Prng } from './prng.js';
import type { NamespaceEntry, Targets } from './snapshot-types.js';

/** Existing namespaces and a few that do not exist yet (they will, as the counter moves on). */
function someNames(model: Model, prng: Prng, count: number): string[] {
  const candidates = [...model.namespaces.keys(), namespaceName(model.nextNamespace), namespaceName(model.nextNamespace + 1)];
  const names = new Set<string>();
  for (let i = 0; i < count; i++) names.add(prng.pick(candidates));
  return [...names];
}

function included(model: Model, prng: Prng): Targets {
  switch (prng.int(0, 5)) {
    case 0:
      return { allNamespaces: true };
    case 1:
    case 2:
      return { namespaceLabelSelector: { matchLabels: { [GROUP_LABEL]: prng.pick(['a', 'b', 'c']) } } };
    case 3: {
      const operator = prng.pick(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const);
      const values = operator === 'In' || operator === 'NotIn' ? { values: [prng.pick(['x', 'y'])] } : {};
      return { namespaceLabelSelector: { matchExpressions: [{ key: TIER_LABEL, operator, ...values }] } };
    }
    case 4:
      return { includedNamespaces: { list: [{ pattern: `soak-ns-${prng.int(0, 9)}*` }] } };
    default:
      return { includedNamespaces: { list: someNames(model, prng, prng.int(1, 3)).map((name) => ({ name })) } };
  }
}

function listedNames(targets: Targets): Set<string> {
  return new Set((targets.includedNamespaces?.list ?? []).flatMap((entry) => (entry.name === undefined ? [] : [entry.name])));
}

function withExclusion(targets: Targets, model: Model, prng: Prng): Targets {
  const taken = listedNames(targets);
  const free = [...model.namespaces.keys()].filter((name) => !taken.has(name));
  if (free.length === 0) return targets;
  const entry: NamespaceEntry = prng.chance(0.2) ? { pattern: `*-${prng.int(0, 9)}` } : { name: prng.pick(free) };
  // A pattern may cover an included name: admission refuses only the same name twice.
  if (entry.pattern !== undefined && taken.size > 0) return targets;
  return { ...targets, excludedNamespaces: { list: [...(targets.excludedNamespaces?.list ?? []), entry] } };
}

export function randomTargets(model: Model, prng: Prng): Targets {
  const targets = included(model, prng);
  return prng.chance(0.3) ? withExclusion(targets, model, prng) : targets;
}

/** The same targets minus something: one listed name fewer, or one more exclusion. */
export function narrowed(targets: Targets, model: Model, prng: Prng): Targets {
  const list = targets.includedNamespaces?.list ?? [];
  if (list.length > 1 && prng.chance(0.5)) {
    const drop = prng.int(0, list.length - 1);
    return { ...targets, includedNamespaces: { list: list.filter((_, i) => i !== drop) } };
  }
  return withExclusion(targets, model, prng);
}
