import { describe, expect, it } from 'vitest';
import { ANNOTATION_HASH, API_VERSION, KIND, type NamespaceInfo, type ResolvedDistribution, type Resource } from '../../../src/domain/types.js';
import { createStoredForms } from '../../../src/reconcile/stored-forms.js';
import { silentLog } from './harness.js';

const HASH = 'h1';
const policy: Resource = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny' }, spec: { podSelector: {} } };
const configMap: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } };
const ns = (...names: string[]): NamespaceInfo[] => names.map((name) => ({ name, labels: {}, terminating: false }));

function rd(resource: Resource): ResolvedDistribution {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'd' }, spec: { resource, targets: { allNamespaces: true } } };
}

/** The API server's dry run as a function of the namespace; counts the calls. */
function dryRuns(stores: (object: Resource) => Resource | Error) {
  const calls: string[] = [];
  return {
    calls,
    api: {
      dryRunCopy: (object: Resource): Promise<Resource> => {
        calls.push(object.metadata.namespace ?? '');
        const answer = stores(object);
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    },
  };
}

const defaulted = (object: Resource): Resource => ({ ...object, spec: { ...object.spec as object, policyTypes: ['Ingress'] } });
const apiError = (code: number): Error => Object.assign(new Error(`HTTP ${code}`), { code, body: { kind: 'Status', code, reason: 'x', message: 'refused' } });

describe('what the API server stores of a template', () => {
  it.each([
    ['the same in two namespaces: copies are compared with it', ['a', 'b'], defaulted, { podSelector: {}, policyTypes: ['Ingress'] }, 2],
    ['one namespace to ask in', ['a'], defaulted, { podSelector: {}, policyTypes: ['Ingress'] }, 1],
    [
      'otherwise in two namespaces: not a function of the template, compared by its fields',
      ['a', 'b'],
      (object: Resource) => ({ ...object, spec: { podSelector: {}, clusterIP: object.metadata.namespace } }),
      undefined,
      2,
    ],
    ['a refused dry run: compared by its fields', ['a', 'b'], () => apiError(403), undefined, 2],
  ])('%s', async (_what, namespaces, stores, spec, calls) => {
    const fake = dryRuns(stores);
    const forms = createStoredForms({ api: fake.api, log: silentLog });
    const attached = await forms.attach(rd(policy), HASH, ns(...namespaces));
    expect(attached.stored?.object.spec).toEqual(spec);
    // Asked once per template: the next pass finds it known (a refusal too, for a while).
    await forms.attach(rd(policy), HASH, ns(...namespaces));
    expect(fake.calls).toHaveLength(calls);
  });

  it('asks again after a transient failure, and never for Secrets or ConfigMaps', async () => {
    let failing = true;
    const fake = dryRuns((object) => (failing ? apiError(503) : defaulted(object)));
    const forms = createStoredForms({ api: fake.api, log: silentLog });
    expect((await forms.attach(rd(policy), HASH, ns('a'))).stored).toBeUndefined();
    failing = false;
    expect((await forms.attach(rd(policy), HASH, ns('a'))).stored).toBeDefined();
    const plain = rd(configMap);
    expect(await forms.attach(plain, HASH, ns('a'))).toBe(plain);
    expect(fake.calls).toEqual(['a', 'a']);
  });

  it('asks once for passes at the same time, skips terminating namespaces, and keeps the same view for the same distribution', async () => {
    const fake = dryRuns(defaulted);
    const forms = createStoredForms({ api: fake.api, log: silentLog });
    const same = rd(policy);
    const namespaces = [{ name: 'gone', labels: {}, terminating: true }, ...ns('a', 'b', 'c')];
    const [first, second] = await Promise.all([forms.attach(same, HASH, namespaces), forms.attach(same, HASH, namespaces)]);
    expect(first).toBe(second);
    expect(fake.calls.sort()).toEqual(['a', 'b']);
  });

  it('compares by the template fields where a copy we wrote was stored otherwise (a mutation of that namespace)', async () => {
    const forms = createStoredForms({ api: dryRuns(defaulted).api, log: silentLog });
    await forms.attach(rd(policy), HASH, ns('a', 'b'));
    const sent = { ...policy, metadata: { ...policy.metadata, namespace: 'm', annotations: { [ANNOTATION_HASH]: HASH } } };
    forms.written(sent, defaulted(sent));
    expect([...(await forms.attach(rd(policy), HASH, ns('a'))).stored!.storedOtherwiseIn]).toEqual([]);
    forms.written(sent, { ...defaulted(sent), spec: { podSelector: {}, policyTypes: ['Ingress'], added: true } });
    expect([...(await forms.attach(rd(policy), HASH, ns('a'))).stored!.storedOtherwiseIn]).toEqual(['m']);
  });
});
