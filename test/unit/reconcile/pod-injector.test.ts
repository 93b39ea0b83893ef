// Pod mutation over the in-memory cluster: which distributed image-pull Secrets a pod gets named.
import { afterEach, describe, expect, it } from 'vitest';
import type { ImagePullSecretInjection } from '../../../src/domain/types.js';
import { createPodInjector, type PodInjector } from '../../../src/reconcile/pod-injector.js';
import { distribution, foreign } from '../builders.js';
import { silentLog, startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');
const CONFIG = { '.dockerconfigjson': b64({ auths: { 'registry.example.com': { auth: Buffer.from('user:do-not-log').toString('base64') } } }) };
const pod = (image: string, labels: Record<string, string> = {}): object => ({ metadata: { name: 'p', labels }, spec: { containers: [{ name: 'c', image }] } });

async function setup(mode: ImagePullSecretInjection, type = 'kubernetes.io/dockerconfigjson'): Promise<PodInjector> {
  h = await startHarness();
  h.cluster.putNamespace('team-a', { team: 'a' });
  h.cluster.putNamespace('team-b', { team: 'b' });
  h.cluster.putNamespace('quiet', { team: 'a', 'resource-distributor.io/inject': 'disabled' });
  const rd = distribution('registry').secret('registry-pull').data(CONFIG).type(type).matchLabels({ team: 'a' }).build();
  h.cluster.putDistribution({ ...rd, spec: { ...rd.spec, imagePullSecretInjection: mode } });
  await new Promise((resolve) => setTimeout(resolve, 10));
  h.requests.reset();
  return createPodInjector({ api: h.requests.api, caches: h.caches, catalog: h.catalog, log: silentLog, forbiddenNamespaces: [] });
}

const names = async (injector: PodInjector, namespace: string, object: object): Promise<string[]> => (await injector.inject(namespace, object)).names;

describe('pod mutation', () => {
  it.each([
    ['MatchingImages, an image of its registry', 'MatchingImages', 'team-a', pod('registry.example.com/team/app:1'), ['registry-pull']],
    ['MatchingImages, another registry', 'MatchingImages', 'team-a', pod('quay.io/team/app:1'), []],
    ['Always, any image', 'Always', 'team-a', pod('nginx'), ['registry-pull']],
    ['Never', 'Never', 'team-a', pod('registry.example.com/team/app:1'), []],
    ['a namespace it does not target', 'Always', 'team-b', pod('nginx'), []],
    ['a namespace that opts out', 'Always', 'quiet', pod('nginx'), []],
    ['a pod that opts out', 'Always', 'team-a', pod('nginx', { 'resource-distributor.io/inject': 'disabled' }), []],
  ] as const)('%s', async (_what, mode, namespace, object, expected) => {
    const injector = await setup(mode);
    expect(await names(injector, namespace, object)).toEqual(expected);
    expect(h.requests.tally().byVerb).toEqual({});
  });

  it('never names a same-named Secret it does not own', async () => {
    const injector = await setup('Always');
    h.cluster.putObject({ ...foreign('Secret', 'registry-pull', 'team-a').build(), metadata: { name: 'registry-pull', namespace: 'team-a', labels: { 'resource-distributor.io/distribution': 'registry' } } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await names(injector, 'team-a', pod('nginx'))).toEqual([]);
  });

  it('never names a same-named Secret outside its cache that its status reports as a conflict', async () => {
    const injector = await setup('Always');
    h.cluster.putObject(foreign('Secret', 'registry-pull', 'team-a').build());
    await h.reconciler.reconcile('registry');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await names(injector, 'team-a', pod('nginx'))).toEqual([]);
  });

  it('never injects a Secret that is not a registry Secret', async () => {
    const injector = await setup('Always', 'Opaque');
    expect(await names(injector, 'team-a', pod('nginx'))).toEqual([]);
  });

  it('reads a namespace it has not cached yet, once', async () => {
    const injector = await setup('Always');
    h.cluster.putNamespace('brand-new', { team: 'a' }, false, true);
    expect(await names(injector, 'brand-new', pod('nginx'))).toEqual(['registry-pull']);
    expect(h.requests.tally().byRequest['get namespaces']).toBe(1);
  });
});

describe('injection from a source', () => {
  it('says once, with a Warning Event, that a source which is not a registry Secret is not injected', async () => {
    h = await startHarness();
    h.cluster.putNamespace('platform');
    h.cluster.putNamespace('team-a', { team: 'a' });
    h.cluster.putObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'platform' }, type: 'Opaque', data: { k: 'dg==' } });
    const rd = distribution('from-source').matchLabels({ team: 'a' }).build();
    const source = { apiVersion: 'v1', kind: 'Secret', namespace: 'platform', name: 'creds' };
    h.cluster.putDistribution({ ...rd, spec: { targets: rd.spec.targets, source, imagePullSecretInjection: 'Always' } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    h.caches.sources.follow([source]);
    for (let i = 0; i < 50 && !h.caches.sources.get(source).synced; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    await h.reconciler.reconcile('from-source');
    await h.reconciler.reconcile('from-source');
    expect(h.cluster.events.filter((event) => event.reason === 'InjectionNotPossible').map((event) => event.type)).toEqual(['Warning']);
  });
});
