// Which keys reach copies (spec.copyData), against the real control plane with the whole product
// (admission and controller, logging at trace level): a cert-manager style kubernetes.io/tls
// Secret shared as its CA only. Without a type for its copies nothing is written, and kubectl
// apply's warning, the status and an Event say what to set; with secretType: Opaque the copies hold ca.crt alone; a wider
// selection reaches every copy; and the private key's value appears in no copy, log line, Event,
// status or admission answer. A template whose selection leaves its type without a key is denied
// with the fix; a registry Secret's copies without its other keys are still injected into pods,
// and cannot be made Opaque while injection is on; a ConfigMap's include and exclude lists narrow
// data and binaryData, and a key no longer selected leaves the copies (one update of each).
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION, type CopyDataRules, type ResourceDistribution, type Resource } from '../../src/domain/types.js';
import type { RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { condition, configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { startTracedServer } from './fixtures/traced-server.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { run } from './support/tools.js';

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const KEY_MARKER = 'private-key-marker-5d1e8a';
const PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----\n${KEY_MARKER}\n-----END PRIVATE KEY-----\n`;
// The forms the value can take: plain, and base64 at each of the three alignments.
const FORMS = [KEY_MARKER, b64(KEY_MARKER), b64(`x${KEY_MARKER}`), b64(`xx${KEY_MARKER}`)].map((form) => form.slice(2, -2));
const FIX = 'set spec.copyData.secretType: Opaque to copy it as an Opaque Secret';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const metrics = createMetrics();
const logs: string[] = [];
const answers: string[] = [];
let server: RunningServer;

function leaks(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

/** A Secret as cert-manager writes it for a CA Certificate. */
function caSecret(namespace?: string): Resource {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'internal-ca', ...(namespace === undefined ? {} : { namespace }), annotations: { 'cert-manager.io/certificate-name': 'internal-ca' } },
    data: { 'ca.crt': b64('the CA'), 'tls.crt': b64('the certificate'), 'tls.key': b64(PRIVATE_KEY) },
  };
}

function withCopyData(rd: ResourceDistribution, copyData: CopyDataRules, extra: Record<string, unknown> = {}): ResourceDistribution {
  return { ...rd, spec: { ...rd.spec, copyData, ...extra } };
}

/** The product's update requests of `resource` so far. */
async function updates(resource: string): Promise<number> {
  return (await metrics.apiRequests.get()).values.filter((v) => v.labels.verb === 'update' && v.labels.resource === resource).reduce((sum, v) => sum + v.value, 0);
}

const keys = (copy: Resource | undefined): string[] => Object.keys(copy?.data ?? {}).sort();

beforeAll(async () => {
  server = await startTracedServer(kc, 'e2e-copydata', logs, metrics);
  // The distribution webhook answers once registered: a selection of a bad key is denied in a dry run.
  await waitFor(
    async () => {
      const probe = withCopyData(distributionOf(uniqueName('probe'), caSecret(), {}), { include: ['a/b'] });
      const denied = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: probe, dryRun: 'All' })).catch(() => undefined);
      return denied?.message.includes('denied the request') ? true : undefined;
    },
    { what: 'the distribution webhook to be called', timeoutMs: 30_000 },
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('spec.copyData', () => {
  it('shares a cert-manager CA without its private key: Opaque copies of ca.crt, the key nowhere', async () => {
    const source = (await kube.createNamespace('cd-cert-manager')).metadata!.name!;
    const targets = [(await kube.createNamespace('cd-team')).metadata!.name!, (await kube.createNamespace('cd-team')).metadata!.name!];
    await kube.put(caSecret(source));
    const name = uniqueName('rd-ca');
    const rd: ResourceDistribution = distributionOf(name, caSecret(), { includedNamespaces: { list: targets.map((ns) => ({ name: ns })) } });
    delete rd.spec.resource;
    rd.spec.source = { apiVersion: 'v1', kind: 'Secret', namespace: source, name: 'internal-ca' };

    // Its CA only, of the source's type: no copy can be written. kubectl apply warns at once (the
    // source's type may still change); the status says what to set, and an Event, once.
    const { stderr } = await run('kubectl', ['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(withCopyData(rd, { include: ['ca.crt'] })) });
    console.log(stderr.trim());
    expect(stderr).toContain(`Warning: spec.copyData: source Secret ${source}/internal-ca is of type "kubernetes.io/tls", and the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.crt" and "tls.key"`);
    expect(stderr).toContain(FIX);
    answers.push(stderr);
    await kube.createDistribution(withCopyData(rd, { include: ['ca.crt'] }));
    const held = await kube.waitForStatus(name, (_s, found) => condition(found, 'NotDistributable')?.status === 'True');
    const message = condition(held, 'NotDistributable')?.message ?? '';
    console.log(`NotDistributable: ${message}`);
    expect(message).toContain('without the key "tls.crt" and "tls.key"');
    expect(message).toContain(FIX);
    for (const ns of targets) expect(await kube.get('Secret', ns, 'internal-ca')).toBeUndefined();
    const event = await waitFor(async () => (await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })).items.find((e) => e.reason === 'NotDistributable'), {
      what: 'the NotDistributable Event',
    });
    expect(event.message).toContain(FIX);

    // The fix: copies of type Opaque, holding ca.crt alone.
    await kube.updateDistribution(name, (found) => {
      found.spec.copyData = { include: ['ca.crt'], secretType: 'Opaque' };
    });
    for (const ns of targets) {
      const copy = await kube.waitForObject('Secret', ns, 'internal-ca', (o) => o !== undefined);
      expect(copy?.type).toBe('Opaque');
      expect(copy?.data).toEqual({ 'ca.crt': b64('the CA') });
    }
    const ready = await kube.waitForStatus(name, (s) => s.succeeded === 2 && s.observedGeneration === 2);
    expect(condition(ready, 'NotDistributable')).toBeUndefined();

    // A wider selection reaches every copy; the private key still reaches none.
    await kube.updateDistribution(name, (found) => {
      found.spec.copyData = { include: ['*.crt'], exclude: ['tls.key'], secretType: 'Opaque' };
    });
    for (const ns of targets) {
      const copy = await kube.waitForObject('Secret', ns, 'internal-ca', (o) => keys(o).length === 2);
      expect(keys(copy)).toEqual(['ca.crt', 'tls.crt']);
    }
    await kube.waitForStatus(name, (s) => s.succeeded === 2 && s.observedGeneration === 3);

    const copies = await Promise.all(targets.map((ns) => kube.get('Secret', ns, 'internal-ca')));
    const events = await core.listEventForAllNamespaces();
    const status = JSON.stringify((await kube.getDistribution(name))?.status);
    expect(logs.length).toBeGreaterThan(10);
    for (const [where, text] of Object.entries({ copies: JSON.stringify(copies), logs: logs.join(''), events: JSON.stringify(events.items), status, answers: answers.join('\n') })) {
      expect(leaks(text), where).toEqual([]);
    }
  });

  it('denies a template whose selection leaves its Secret type without a key, saying what to set', async () => {
    const target = (await kube.createNamespace('cd-denied')).metadata!.name!;
    const template = distributionOf(uniqueName('rd-ca-template'), caSecret(), { includedNamespaces: { list: [{ name: target }] } });
    const cases: [CopyDataRules, Record<string, unknown>, string[]][] = [
      [{ exclude: ['tls.key'] }, {}, ['spec.copyData: the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.key"', FIX]],
      [{ include: ['ca.crt', 'a/b'] }, {}, ['spec.copyData.include[1]: "a/b" is not a data key']],
      [{ include: ['ca.crt'], secretType: 'kubernetes.io/service-account-token' }, {}, ['spec.copyData.secretType: Secrets of type "kubernetes.io/service-account-token" are never distributed']],
      [{ secretType: 'Opaque' }, { imagePullSecretInjection: 'Always' }, ['spec.imagePullSecretInjection: is only for registry Secrets', 'spec.copyData.secretType makes the copies "Opaque"']],
    ];
    for (const [copyData, extra, expected] of cases) {
      const { message } = await rejection(kube.createDistribution(withCopyData(template, copyData, extra)));
      answers.push(message);
      console.log(`denied: ${message}`);
      expect(message).toContain('denied the request');
      for (const text of expected) expect(message).toContain(text);
    }
    // The same CA, as its copies may be: admitted, and copied.
    await kube.createDistribution(withCopyData(template, { include: ['ca.crt'], secretType: 'Opaque' }));
    const copy = await kube.waitForObject('Secret', target, 'internal-ca', (o) => o !== undefined);
    expect(copy).toMatchObject({ type: 'Opaque', data: { 'ca.crt': b64('the CA') } });
    expect(leaks(JSON.stringify(copy) + answers.join('\n'))).toEqual([]);
  });

  it('keeps image-pull injection working on copies that stay registry Secrets, and refuses to make them Opaque', async () => {
    const source = (await kube.createNamespace('cd-registry')).metadata!.name!;
    const target = (await kube.createNamespace('cd-pods')).metadata!.name!;
    const config = { auths: { 'registry.example.com': { auth: b64('robot:pw') } } };
    await kube.put({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/dockerconfigjson', metadata: { name: 'pull', namespace: source }, data: { '.dockerconfigjson': b64(JSON.stringify(config)), 'rotation-notes': b64(PRIVATE_KEY) } });
    const name = uniqueName('rd-pull');
    const rd: ResourceDistribution = distributionOf(name, caSecret(), { includedNamespaces: { list: [{ name: target }] } });
    delete rd.spec.resource;
    rd.spec.source = { apiVersion: 'v1', kind: 'Secret', namespace: source, name: 'pull' };
    await kube.createDistribution(withCopyData(rd, { exclude: ['rotation-notes'] }, { imagePullSecretInjection: 'MatchingImages' }));
    const copy = await kube.waitForObject('Secret', target, 'pull', (o) => o !== undefined);
    expect(copy?.type).toBe('kubernetes.io/dockerconfigjson');
    expect(keys(copy)).toEqual(['.dockerconfigjson']);
    await kube.waitForStatus(name, (s) => s.succeeded === 1);

    const pod = await core.createNamespacedPod({ namespace: target, body: { metadata: { name: 'app' }, spec: { containers: [{ name: 'app', image: 'registry.example.com/team/app:1' }] } } });
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'pull' }]);

    const stored = (await kube.getDistribution(name))!;
    const body = withCopyData(stored, { exclude: ['rotation-notes'], secretType: 'Opaque' });
    const { message } = await rejection(custom.replaceClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name, body }));
    answers.push(message);
    expect(message).toContain('spec.imagePullSecretInjection: is only for registry Secrets');
    expect(leaks(JSON.stringify(copy))).toEqual([]);
  });

  it("narrows a ConfigMap's data and binaryData, and a key no longer selected leaves the copies", async () => {
    const targets = [(await kube.createNamespace('cd-config')).metadata!.name!, (await kube.createNamespace('cd-config')).metadata!.name!];
    const name = uniqueName('rd-config');
    const template: Resource = {
      ...configMapOf('settings', { 'app.yaml': 'a: 1', 'db.yaml': 'db: 2', 'internal.yaml': 'secret: 3' }),
      binaryData: { 'logo.png': b64('png'), 'internal.bin': b64('bin') },
    };
    await kube.createDistribution(withCopyData(distributionOf(name, template, { includedNamespaces: { list: targets.map((ns) => ({ name: ns })) } }), { include: ['*.yaml', 'logo.png'], exclude: ['internal.*'] }));
    for (const ns of targets) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined);
      expect(copy?.data).toEqual({ 'app.yaml': 'a: 1', 'db.yaml': 'db: 2' });
      expect(copy?.binaryData).toEqual({ 'logo.png': b64('png') });
    }
    await kube.waitForStatus(name, (s) => s.succeeded === 2);

    const before = await updates('configmaps');
    await kube.updateDistribution(name, (rd) => {
      rd.spec.copyData = { include: ['*.yaml', 'logo.png'], exclude: ['internal.*', 'db.yaml'] };
    });
    for (const ns of targets) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.data?.['db.yaml'] === undefined);
      expect(copy?.data).toEqual({ 'app.yaml': 'a: 1' });
      expect(copy?.binaryData).toEqual({ 'logo.png': b64('png') });
    }
    await kube.waitForStatus(name, (s) => s.succeeded === 2 && s.observedGeneration === 2);
    // Settled: one update per copy, nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await updates('configmaps')) - before).toBe(targets.length);
  });
});
