import { describe, expect, it } from 'vitest';
import { distribution, namespace, seedSample, terminating } from '../../test/unit/builders.js';
import { computeTargets, hasPattern, isStrictlySorted, isTargeted, labelPairs, listedTargets, matchesSelector, patternIndexSteps, patternSet, sortedWithout, targetCandidates, type TargetCandidates } from './targets.js';
import type { LabelSelector, NamespaceInfo, Targets } from './types.js';

describe('matchesSelector', () => {
  it.each<[string, LabelSelector | undefined, Record<string, string>, boolean]>([
    ['undefined selector matches nothing', undefined, { group: 'test' }, false],
    ['empty selector matches nothing', {}, { group: 'test' }, false],
    ['empty lists match nothing', { matchLabels: {}, matchExpressions: [] }, { group: 'test' }, false],
    ['matchLabels equal', { matchLabels: { group: 'test' } }, { group: 'test', x: 'y' }, true],
    ['matchLabels different value', { matchLabels: { group: 'test' } }, { group: 'prod' }, false],
    ['matchLabels all must match', { matchLabels: { group: 'test', tier: 'web' } }, { group: 'test' }, false],
    ['matchLabels does not match an inherited key', { matchLabels: { toString: 'x' } }, {}, false],
    ['In matches a listed value', { matchExpressions: [{ key: 'env', operator: 'In', values: ['a', 'b'] }] }, { env: 'b' }, true],
    ['In with another value', { matchExpressions: [{ key: 'env', operator: 'In', values: ['a'] }] }, { env: 'c' }, false],
    ['In with the key absent', { matchExpressions: [{ key: 'env', operator: 'In', values: ['a'] }] }, {}, false],
    ['NotIn with another value', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, { env: 'c' }, true],
    ['NotIn with a listed value', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, { env: 'a' }, false],
    ['NotIn matches when the key is absent', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, {}, true],
    ['Exists with the key', { matchExpressions: [{ key: 'env', operator: 'Exists' }] }, { env: '' }, true],
    ['Exists without the key', { matchExpressions: [{ key: 'env', operator: 'Exists' }] }, { other: 'x' }, false],
    ['DoesNotExist without the key', { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, {}, true],
    ['DoesNotExist with the key', { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, { env: 'x' }, false],
    [
      'labels and expressions are ANDed',
      { matchLabels: { group: 'test' }, matchExpressions: [{ key: 'env', operator: 'Exists' }] },
      { group: 'test' },
      false,
    ],
    [
      'an unknown operator selects nothing',
      { matchExpressions: [{ key: 'env', operator: 'Gt' as 'In', values: ['1'] }] },
      { env: '2' },
      false,
    ],
  ])('%s', (_name, selector, labels, expected) => {
    expect(matchesSelector(selector, labels)).toBe(expected);
  });
});

describe('computeTargets', () => {
  const seedNamespaces = [
    namespace('ns-1'),
    namespace('ns-2', { group: 'test' }),
    namespace('ns-3', { group: 'test' }),
    namespace('ns-5', { group: 'test' }),
    namespace('ns-6', { group: 'prod' }),
  ];

  it('seed example: included ns-1 and ns-4, selector group=test, excluded ns-3 (which has group=test)', () => {
    const rd = seedSample().build();
    const result = computeTargets(rd.spec.targets, [...seedNamespaces, namespace('ns-4')]);
    expect(result).toEqual({ targeted: ['ns-1', 'ns-2', 'ns-4', 'ns-5'], missing: [] });
    expect(isTargeted(rd.spec.targets, namespace('ns-3', { group: 'test' }))).toBe(false);
  });

  it.each([
    [
      'included names that do not exist are missing',
      distribution('d').included('ns-1', 'nope').build(),
      { targeted: ['ns-1'], missing: ['nope'] },
    ],
    [
      'a terminating included namespace is missing',
      distribution('d').included('ns-1', 'dying').build(),
      { targeted: ['ns-1'], missing: ['dying'] },
    ],
    [
      'a terminating namespace selected by labels is neither targeted nor missing',
      distribution('d').matchLabels({ group: 'test' }).build(),
      { targeted: ['ns-2', 'ns-3', 'ns-5'], missing: [] },
    ],
    [
      'allNamespaces takes every live namespace but the system ones',
      distribution('d').allNamespaces().build(),
      { targeted: ['default', 'ns-1', 'ns-2', 'ns-3', 'ns-5', 'ns-6'], missing: [] },
    ],
    [
      'allNamespaces minus excluded',
      distribution('d').allNamespaces().excluded('ns-2', 'ns-6').build(),
      { targeted: ['default', 'ns-1', 'ns-3', 'ns-5'], missing: [] },
    ],
    [
      'kube-system, kube-public and kube-node-lease never, even when included by name',
      distribution('d').included('kube-system', 'kube-public', 'kube-node-lease', 'ns-1').build(),
      { targeted: ['ns-1'], missing: [] },
    ],
    [
      'an excluded name that does not exist is not missing',
      distribution('d').included('gone').excluded('gone').build(),
      { targeted: [], missing: [] },
    ],
    ['empty targets select nothing', distribution('d').build(), { targeted: [], missing: [] }],
    [
      'an empty selector selects nothing',
      distribution('d').selector({ matchLabels: {} }).build(),
      { targeted: [], missing: [] },
    ],
    [
      'duplicates collapse, results are sorted',
      distribution('d').included('ns-5', 'ns-1', 'ns-5', 'zz', 'aa').matchLabels({ group: 'test' }).build(),
      { targeted: ['ns-1', 'ns-2', 'ns-3', 'ns-5'], missing: ['aa', 'zz'] },
    ],
  ])('%s', (_name, rd, expected) => {
    const namespaces = [
      ...seedNamespaces,
      namespace('default'),
      namespace('kube-system', { group: 'test' }),
      namespace('kube-public', { group: 'test' }),
      namespace('kube-node-lease', { group: 'test' }),
      terminating('dying', { group: 'test' }),
    ];
    expect(computeTargets(rd.spec.targets, namespaces)).toEqual(expected);
  });

  it('namespaces given out of order, one twice: each target once, sorted', () => {
    const rd = distribution('d').included('ns-3', 'ns-1', 'gone', 'ns-2').build();
    const result = computeTargets(rd.spec.targets, [namespace('ns-2'), namespace('ns-1'), namespace('ns-2'), terminating('ns-3')]);
    expect(result).toEqual({ targeted: ['ns-1', 'ns-2'], missing: ['gone', 'ns-3'] });
  });

  it('operator-forbidden namespaces are never targets, nor missing', () => {
    const rd = distribution('d').allNamespaces().included('secret-ns', 'absent-forbidden').build();
    const result = computeTargets(rd.spec.targets, [namespace('secret-ns'), namespace('ns-1')], ['secret-ns', 'absent-forbidden']);
    expect(result).toEqual({ targeted: ['ns-1'], missing: [] });
  });
});

describe('computeTargets: a rule of names alone over namespaces in order (merged, no set of names)', () => {
  const cluster = [namespace('a'), namespace('b'), terminating('c'), namespace('d'), namespace('kube-system'), namespace('vault'), namespace('z')];
  it.each<[string, Targets, string[], { targeted: string[]; missing: string[] }]>([
    ['names, some missing, one terminating', { includedNamespaces: { list: [{ name: 'd' }, { name: 'a' }, { name: 'c' }, { name: 'gone' }] } }, [], { targeted: ['a', 'd'], missing: ['c', 'gone'] }],
    ['less excluded names and patterns', { includedNamespaces: { list: [{ name: 'a' }, { name: 'b' }, { name: 'z' }] }, excludedNamespaces: { list: [{ name: 'b' }, { pattern: 'z*' }] } }, [], { targeted: ['a'], missing: [] }],
    ['a system namespace never', { includedNamespaces: { list: [{ name: 'kube-system' }, { name: 'a' }] } }, [], { targeted: ['a'], missing: [] }],
    ['... unless named so (systemByName)', { includedNamespaces: { list: [{ name: 'kube-system' }, { name: 'a' }] }, systemByName: true }, [], { targeted: ['a', 'kube-system'], missing: [] }],
    ['a forbidden one never', { includedNamespaces: { list: [{ name: 'vault' }, { name: 'a' }] } }, ['vault'], { targeted: ['a'], missing: [] }],
    ['an empty selector beside names', { includedNamespaces: { list: [{ name: 'b' }] }, namespaceLabelSelector: {} }, [], { targeted: ['b'], missing: [] }],
  ])('%s: as over the same namespaces in any order', (_what, targets, forbidden, expected) => {
    expect(computeTargets(targets, cluster, forbidden)).toEqual(expected);
    expect(computeTargets(targets, [...cluster].reverse(), forbidden)).toEqual(expected);
    expect(computeTargets(targets, [...cluster, namespace('a')], forbidden)).toEqual(expected);
  });
});

describe('name patterns', () => {
  const namespaces = ['team-a', 'team-b', 'my-team-c', 'ops', 'team-prod', 'kube-system'].map((name) => namespace(name));
  it.each([
    ['a pattern matches the whole name', distribution('d').patterns(['team-*']).build(), ['team-a', 'team-b', 'team-prod']],
    ['... anchored at both ends', distribution('d').patterns(['*-prod']).build(), ['team-prod']],
    ['a pattern beside names', distribution('d').included('ops').patterns(['team-a']).build(), ['ops', 'team-a']],
    ['an excluded pattern wins over included names and patterns', distribution('d').included('team-b', 'ops').patterns(['team-*'], ['*-prod', 'team-b']).build(), ['ops', 'team-a']],
    ['"*" is every namespace but the system ones', distribution('d').patterns(['*']).build(), ['my-team-c', 'ops', 'team-a', 'team-b', 'team-prod']],
    ['an excluded pattern under allNamespaces', distribution('d').allNamespaces().patterns([], ['team-*']).build(), ['my-team-c', 'ops']],
  ])('%s', (_what, rd, targeted) => {
    expect(computeTargets(rd.spec.targets, namespaces)).toEqual({ targeted, missing: [] });
  });

  it('a listed name that a pattern excludes is neither targeted nor missing', () => {
    const rd = distribution('d').included('team-z').patterns([], ['team-*']).build();
    expect(computeTargets(rd.spec.targets, namespaces)).toEqual({ targeted: [], missing: [] });
  });
});

describe('listedTargets: the namespaces a rule names and may write to', () => {
  it.each<[string, Targets, string[], string[]]>([
    ['names, sorted, each once', { includedNamespaces: { list: [{ name: 'b' }, { name: 'a' }, { name: 'b' }] } }, [], ['a', 'b']],
    ['already in order', { includedNamespaces: { list: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } }, [], ['a', 'b', 'c']],
    ['less excluded names and patterns', { includedNamespaces: { list: [{ name: 'a' }, { name: 'team-x' }, { name: 'c' }] }, excludedNamespaces: { list: [{ name: 'c' }, { pattern: 'team-*' }] } }, [], ['a']],
    ['less the system namespaces', { includedNamespaces: { list: [{ name: 'kube-system' }, { name: 'a' }] } }, [], ['a']],
    ['... unless named so (systemByName)', { includedNamespaces: { list: [{ name: 'kube-system' }, { name: 'a' }] }, systemByName: true }, [], ['a', 'kube-system']],
    ['less the forbidden ones', { includedNamespaces: { list: [{ name: 'vault' }, { name: 'a' }] } }, ['vault'], ['a']],
    ['patterns and selectors name nothing', { includedNamespaces: { list: [{ pattern: 'team-*' }] }, namespaceLabelSelector: { matchLabels: { a: 'b' } } }, [], []],
  ])('%s', (_what, targets, forbidden, expected) => {
    expect(listedTargets(targets, forbidden)).toEqual(expected);
  });

  it('is made once per targets object', () => {
    const targets: Targets = { includedNamespaces: { list: [{ name: 'b' }, { name: 'a' }] } };
    expect(listedTargets(targets)).toBe(listedTargets(targets));
  });
});

describe('name list helpers', () => {
  it.each<[string, string[], boolean]>([
    ['empty', [], true],
    ['one', ['a'], true],
    ['in order', ['a', 'b', 'ns-10', 'ns-9'], true],
    ['a name twice', ['a', 'a'], false],
    ['out of order', ['b', 'a'], false],
    ['code-unit order, as sort() has it', ['Z', 'a'], true],
  ])('isStrictlySorted: %s', (_what, names, sorted) => {
    expect(isStrictlySorted(names)).toBe(sorted);
    if (sorted) expect([...names].sort()).toEqual(names);
  });

  it.each<[string, string[], string[], string[]]>([
    ['nothing taken', ['a', 'b'], [], ['a', 'b']],
    ['everything taken', ['a', 'b'], ['a', 'b'], []],
    ['some taken, others beside', ['b', 'd', 'f'], ['a', 'b', 'c', 'f', 'g'], ['d']],
    ['from nothing', [], ['a'], []],
  ])('sortedWithout: %s', (_what, from, taken, expected) => {
    expect(sortedWithout(from, taken)).toEqual(expected);
  });

  it.each<[string, Targets['includedNamespaces'], boolean]>([
    ['no list', undefined, false],
    ['names only', { list: [{ name: 'a' }] }, false],
    ['a pattern among names', { list: [{ name: 'a' }, { pattern: 'team-*' }] }, true],
  ])('hasPattern: %s', (_what, list, expected) => {
    expect(hasPattern(list)).toBe(expected);
  });
});

describe('isTargeted', () => {
  const all = distribution('d').allNamespaces().build().spec.targets;

  it.each([
    ['a live namespace under allNamespaces', namespace('ns-1'), true],
    ['kube-system under allNamespaces', namespace('kube-system'), false],
    ['kube-public under allNamespaces', namespace('kube-public'), false],
    ['kube-node-lease under allNamespaces', namespace('kube-node-lease'), false],
    ['a terminating namespace', terminating('ns-1'), false],
    ['an operator-forbidden namespace', namespace('vault'), false],
  ])('%s', (_name, ns, expected) => {
    expect(isTargeted(all, ns, ['vault'])).toBe(expected);
  });
});

describe('computeTargets cost', () => {
  /** Name lists whose entries count how often their name is read. */
  function countedList(prefix: string, size: number): { list: { name: string }[]; reads: () => number } {
    let reads = 0;
    const list = Array.from({ length: size }, (_, i) => ({
      get name(): string {
        reads++;
        return `${prefix}-${i}`;
      },
    }));
    return { list, reads: () => reads };
  }

  // One crafted distribution (long included and excluded lists, a long In list) over many
  // namespaces must cost the sum of their sizes, not the product: that product froze the process.
  it.each([
    [1000, 2000],
    [3000, 500],
  ])('reads each listed name a bounded number of times over %i namespaces with lists of %i', (namespaceCount, listSize) => {
    const included = countedList('in', listSize);
    const excluded = countedList('out', listSize);
    const values = Array.from({ length: listSize }, (_, i) => `v${i}`);
    const namespaces = Array.from({ length: namespaceCount }, (_, i) => namespace(`ns-${i}`, { tier: `v${i}` }));
    const { targeted } = computeTargets(
      {
        includedNamespaces: { list: included.list },
        excludedNamespaces: { list: excluded.list },
        namespaceLabelSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values }] },
      },
      namespaces,
    );
    expect(targeted).toHaveLength(Math.min(namespaceCount, listSize));
    expect(included.reads()).toBeLessThanOrEqual(2 * listSize);
    expect(excluded.reads()).toBeLessThanOrEqual(2 * listSize);
  });
});

describe('compiled targets', () => {
  it('reads a distribution\'s name lists once, however many namespaces or pods are tested against it', () => {
    const reads: string[] = [];
    const targets = new Proxy(
      { includedNamespaces: { list: [{ name: 'team-a' }] }, excludedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `x-${i}` })) } },
      {
        get(target, key, receiver) {
          reads.push(String(key));
          return Reflect.get(target, key, receiver) as unknown;
        },
      },
    );
    expect(isTargeted(targets, { name: 'team-b', labels: {}, terminating: false })).toBe(false);
    const first = reads.length;
    for (let i = 0; i < 100; i++) isTargeted(targets, { name: 'team-a', labels: {}, terminating: false });
    expect(isTargeted(targets, { name: 'team-a', labels: {}, terminating: false })).toBe(true);
    expect(reads).toHaveLength(first);
    // Another forbidden list compiles again.
    expect(isTargeted(targets, { name: 'team-a', labels: {}, terminating: false }, ['team-a'])).toBe(false);
  });
});

describe('targetCandidates: where a rule can find its targets', () => {
  const cluster = [
    namespace('team-a-1', { team: 'a', env: 'prod' }),
    namespace('team-a-2', { team: 'a', env: 'dev' }),
    namespace('team-b-1', { team: 'b', env: 'prod' }),
    namespace('listed'),
    terminating('gone', { team: 'a' }),
    namespace('kube-system', { team: 'a' }),
  ];
  const candidatesIn = (candidates: TargetCandidates): NamespaceInfo[] =>
    candidates.every ? cluster : cluster.filter((ns) => candidates.names.includes(ns.name) || labelPairs(ns.labels).some((pair) => candidates.labels.includes(pair)));

  it.each<[string, Targets, TargetCandidates]>([
    ['allNamespaces: every namespace', { allNamespaces: true }, { every: true }],
    ['an included pattern: every namespace', { includedNamespaces: { list: [{ pattern: 'team-*' }] } }, { every: true }],
    ['names only', { includedNamespaces: { list: [{ name: 'listed' }, { name: 'missing' }] } }, { every: false, names: ['listed', 'missing'], labels: [] }],
    ['matchLabels: its first pair', { namespaceLabelSelector: { matchLabels: { team: 'a', env: 'prod' } } }, { every: false, names: [], labels: ['team=a'] }],
    ['an In expression: one of its values', { namespaceLabelSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] } }, { every: false, names: [], labels: ['env=prod', 'env=dev'] }],
    ['NotIn only: every namespace', { namespaceLabelSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] } }, { every: true }],
    ['Exists only: every namespace', { namespaceLabelSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } }, { every: true }],
    ['an empty selector and names: the names', { namespaceLabelSelector: {}, includedNamespaces: { list: [{ name: 'listed' }] } }, { every: false, names: ['listed'], labels: [] }],
    ['names, a selector and exclusions', { namespaceLabelSelector: { matchLabels: { team: 'a' } }, includedNamespaces: { list: [{ name: 'listed' }] }, excludedNamespaces: { list: [{ name: 'team-a-2' }] } }, { every: false, names: ['listed'], labels: ['team=a'] }],
  ])('%s', (_, targets, expected) => {
    const candidates = targetCandidates(targets);
    expect(candidates).toEqual(expected);
    // The rule over the candidates targets what it targets over every namespace.
    expect(computeTargets(targets, candidatesIn(candidates))).toEqual(computeTargets(targets, cluster));
  });
});

describe('patternIndexSteps', () => {
  it.each([
    { name: 'names alone: nothing to index', targets: { includedNamespaces: { list: [{ name: 'a' }] } }, steps: 0 },
    { name: 'included patterns', targets: { includedNamespaces: { list: [{ pattern: 'team-*' }] } }, steps: 1 },
    { name: 'both lists with patterns: a step each', targets: { includedNamespaces: { list: [{ pattern: 'team-*' }] }, excludedNamespaces: { list: [{ pattern: '*-tmp' }] } }, steps: 2 },
  ] as { name: string; targets: Targets; steps: number }[])("$name: $steps steps, then the sets are made", ({ targets, steps }) => {
    const indexing = patternIndexSteps(targets);
    let taken = 0;
    while (indexing.next().done !== true) taken++;
    expect(taken).toBe(steps);
    expect(patternSet(targets.includedNamespaces)).toBe(patternSet(targets.includedNamespaces));
  });
});
