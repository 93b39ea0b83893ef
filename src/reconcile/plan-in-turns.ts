// The plan of a full pass over many namespaces, made a slice of namespaces at a time with a turn of
// the event loop between slices. Rendering 10,000 copies takes the better part of a second; made at
// once, and by several passes one after another (every template changed together), it held webhook
// calls and watch events for seconds: long enough for the API server to give up on the namespace
// webhook, which then admits the namespace without generating its copies. Each slice is planned as
// a pass within those namespaces is (planDistribution's `within`): together they give the whole
// plan. The pass applies each slice while the next is made: its first writes need not wait for
// the whole plan.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { planDistribution } from '../domain/plan.js';
import { forbiddenFor, listedTargets } from '../domain/targets.js';
import type { Action, NamespaceInfo, ResolvedDistribution, Resource } from '../domain/types.js';

export interface FullPlanInput {
  distribution: ResolvedDistribution;
  namespaces: readonly NamespaceInfo[];
  existing: ReadonlyMap<string, Resource>;
  forbidden: readonly string[];
  now: Date;
}

/** Every namespace the plan decides for: those given, and the listed ones that do not exist. */
function everyName(input: FullPlanInput): string[] {
  const names = input.namespaces.map((ns) => ns.name);
  const known = new Set(names);
  for (const name of listedTargets(input.distribution.spec.targets, forbiddenFor(input.distribution, input.forbidden))) if (!known.has(name)) names.push(name);
  return names;
}

/** How a full plan is sliced: `first` namespaces, then `size` at a time. */
export interface Slicing {
  first: number;
  size: number;
}

/**
 * planDistribution's actions, a slice of namespaces at a time, each slice as soon as it is made:
 * the writes of one go out while the next is planned. The first slice is small (the writes in
 * flight at once), so that the first write waits for a few renders, not for hundreds.
 * writePolicy strict plans at once: one conflict anywhere holds back every write, which no slice
 * can tell alone.
 */
export async function* planSlices(input: FullPlanInput, slicing: Slicing): AsyncGenerator<Action[]> {
  const first = Math.max(1, slicing.first);
  const size = Math.max(1, slicing.size);
  if (input.distribution.spec.writePolicy === 'strict' || input.namespaces.length <= first) {
    yield planDistribution(input);
    return;
  }
  const infos = new Map(input.namespaces.map((ns) => [ns.name, ns]));
  const names = everyName(input);
  for (let start = 0; start < names.length; ) {
    if (start > 0) await nextTurn();
    const slice = names.slice(start, start + (start === 0 ? first : size));
    start += slice.length;
    const namespaces = slice.flatMap((name) => infos.get(name) ?? []);
    const existing = new Map(slice.flatMap((name) => {
      const object = input.existing.get(name);
      return object === undefined ? [] : [[name, object] as const];
    }));
    yield planDistribution({ ...input, namespaces, existing, within: new Set(slice) });
  }
}
