// integrations/karmada's ResourceInterpreterCustomization run by Karmada's own interpreter
// (`karmadactl interpret`, the Lua VM and conversions the controllers use), offline, over member
// statuses as the product writes them: what the fleet's status and each member's health become.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT } from '../control-plane/index.js';

const CUSTOMIZATIONS = join(REPO_ROOT, 'integrations', 'karmada', 'resource-interpreter-customization.yaml');
type Version = 'v1alpha1' | 'v1beta1';
let dir = '';
/** One file per customization of the List (karmadactl reads one object a file). */
const customization: Partial<Record<Version, string>> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rd-interpret-'));
  const list = parse(await readFile(CUSTOMIZATIONS, 'utf8')) as { items: { spec: { target: { apiVersion: string } } }[] };
  for (const item of list.items) {
    const version = item.spec.target.apiVersion.split('/')[1] as Version;
    customization[version] = join(dir, `customization-${version}.yaml`);
    await writeFile(customization[version], stringify(item));
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function karmadactl(args: string[], version: Version = 'v1alpha1'): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(inject('karmadactl'), ['interpret', '-f', customization[version]!, ...args]);
  if (stderr.trim() !== '') throw new Error(`karmadactl interpret ${args.join(' ')}: ${stderr}`);
  return stdout;
}

async function file(name: string, documents: readonly unknown[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, documents.map((d) => stringify(d)).join('---\n'));
  return path;
}

/** What one operation returns (the single result document). */
async function interpret(operation: string, files: Record<string, readonly unknown[]>, version: Version = 'v1alpha1'): Promise<unknown> {
  const args = ['--operation', operation];
  for (const [flag, documents] of Object.entries(files)) args.push(`--${flag}`, await file(`${operation}-${flag}.yaml`, documents));
  const documents = parseAllDocuments(await karmadactl(args, version)).map((d) => d.toJS() as unknown);
  expect(documents).toHaveLength(1);
  return documents[0];
}

const T0 = '2026-11-01T00:00:00Z';
const T1 = '2026-11-01T00:00:05Z';
const KRUISE_SIX = ['GetResourceFailed', 'CreateResourceFailed', 'UpdateResourceFailed', 'DeleteResourceFailed', 'ConflictOccurred', 'NamespaceNotExists'];

/** A member's status as the product writes it: the six, then Ready and Stalled. */
function memberStatus(counts: { desired: number; succeeded: number }, missing: string[] = [], at = T0) {
  const failed = counts.desired - counts.succeeded;
  const six = KRUISE_SIX.map((type) =>
    type === 'NamespaceNotExists' && missing.length > 0
      ? { type, status: 'True', reason: 'NamespaceNotExists', message: `namespace not found: ${missing.join(', ')}`, lastTransitionTime: at, failedNamespace: missing }
      : { type, status: 'False', reason: 'Succeeded', lastTransitionTime: at },
  );
  const ready =
    failed === 0
      ? { type: 'Ready', status: 'True', reason: 'Synced', message: `${counts.desired} of ${counts.desired} targets hold a correct copy`, lastTransitionTime: at }
      : { type: 'Ready', status: 'False', reason: 'NamespaceNotExists', message: `namespace not found: ${missing.join(', ')}`, lastTransitionTime: at };
  const stalled = failed === 0 ? { type: 'Stalled', status: 'False', reason: 'Succeeded', lastTransitionTime: at } : { ...ready, type: 'Stalled', status: 'True' };
  return { ...counts, failed, conditions: [...six, ready, stalled] };
}

/** A status item as Karmada keeps it after our statusReflection. */
function item(clusterName: string, status: ReturnType<typeof memberStatus>, generations: { template: number; member?: number; observed?: number }) {
  const member = generations.member ?? 1;
  return { clusterName, applied: true, status: { ...status, generation: member, observedGeneration: generations.observed ?? member, resourceTemplateGeneration: generations.template } };
}

function template(generation: number, observedGeneration?: number) {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistribution',
    metadata: { name: 'shared', generation },
    spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared' }, data: { a: '1' } }, targets: { allNamespaces: true } },
    ...(observedGeneration === undefined ? {} : { status: { observedGeneration } }),
  };
}

interface Aggregated {
  status: { desired: number; succeeded: number; failed: number; observedGeneration?: number; conditions?: Record<string, unknown>[] };
}
const conditionOf = (rd: Aggregated, type: string) => rd.status.conditions?.find((c) => c['type'] === type);

describe('the interpreter as Karmada runs it', () => {
  it.each(['v1alpha1', 'v1beta1'] as const)('passes karmadactl interpret --check for every rule it sets (%s)', async (version) => {
    const out = await karmadactl(['--check'], version);
    expect(out).toContain(`TARGET: apps.kruise.io/${version} ResourceDistribution`);
    expect(out).toMatch(/InterpretStatus:\s+PASS/);
    expect(out).toMatch(/AggregateStatus:\s+PASS/);
    expect(out).toMatch(/InterpretHealth:\s+PASS/);
  });

  it('reflects a member status with the generations Karmada needs to compare', async () => {
    const observed = { ...template(3), metadata: { name: 'shared', generation: 3, annotations: { 'resourcetemplate.karmada.io/generation': '2' } }, status: { ...memberStatus({ desired: 2, succeeded: 2 }), observedGeneration: 3 } };
    const reflected = (await interpret('interpretStatus', { 'observed-file': [observed] })) as Record<string, unknown>;
    expect(reflected).toMatchObject({ desired: 2, succeeded: 2, failed: 0, observedGeneration: 3, generation: 3, resourceTemplateGeneration: 2 });
    expect((reflected['conditions'] as unknown[]).length).toBe(8);
  });

  it('sums the counts and says Ready when every member holds this generation', async () => {
    const rd = (await interpret('aggregateStatus', {
      'desired-file': [template(1)],
      'status-file': [item('member1', memberStatus({ desired: 2, succeeded: 2 }), { template: 1 }), item('member2', memberStatus({ desired: 3, succeeded: 3 }, [], T1), { template: 1, member: 2 })],
    })) as Aggregated;
    expect(rd.status).toMatchObject({ desired: 5, succeeded: 5, failed: 0, observedGeneration: 1 });
    expect(rd.status.conditions?.map((c) => c['type'])).toEqual([...KRUISE_SIX, 'Ready', 'Stalled']);
    expect(conditionOf(rd, 'Ready')).toEqual({ type: 'Ready', status: 'True', reason: 'Synced', message: '5 of 5 targets hold a correct copy in 2 clusters', lastTransitionTime: T1 });
  });

  it('names each failed namespace by its member, and keeps the failure True where any member has it', async () => {
    const rd = (await interpret('aggregateStatus', {
      'desired-file': [template(1)],
      'status-file': [item('member1', memberStatus({ desired: 2, succeeded: 1 }, ['gone']), { template: 1 }), item('member2', memberStatus({ desired: 3, succeeded: 3 }), { template: 1 })],
    })) as Aggregated;
    expect(rd.status).toMatchObject({ desired: 5, succeeded: 4, failed: 1, observedGeneration: 1 });
    expect(conditionOf(rd, 'NamespaceNotExists')).toMatchObject({ status: 'True', failedNamespace: ['member1/gone'], message: 'member1: namespace not found: gone' });
    expect(conditionOf(rd, 'Ready')).toMatchObject({ status: 'False', reason: 'NamespaceNotExists', message: 'member1: namespace not found: gone' });
    expect(conditionOf(rd, 'Stalled')).toMatchObject({ status: 'True', message: 'member1: namespace not found: gone' });
    expect(conditionOf(rd, 'ConflictOccurred')).toMatchObject({ status: 'False', reason: 'Succeeded' });
  });

  it('names failed namespaces in the spelling of v1beta1 (failedNamespaces) for its customization', async () => {
    const plural = (status: ReturnType<typeof memberStatus>) => ({
      ...status,
      conditions: status.conditions.map((condition) => {
        const { failedNamespace, ...rest } = condition as typeof condition & { failedNamespace?: string[] };
        return failedNamespace === undefined ? rest : { ...rest, failedNamespaces: failedNamespace };
      }),
    });
    const beta = { ...template(1), apiVersion: 'apps.kruise.io/v1beta1' };
    const rd = (await interpret(
      'aggregateStatus',
      { 'desired-file': [beta], 'status-file': [item('member1', plural(memberStatus({ desired: 2, succeeded: 1 }, ['gone'])), { template: 1 }), item('member2', plural(memberStatus({ desired: 1, succeeded: 0 }, ['away'])), { template: 1 })] },
      'v1beta1',
    )) as Aggregated;
    expect(conditionOf(rd, 'NamespaceNotExists')).toMatchObject({ status: 'True', failedNamespaces: ['member1/gone', 'member2/away'] });
    expect(conditionOf(rd, 'NamespaceNotExists')).not.toHaveProperty('failedNamespace');
  });

  it.each([
    ['a member still on the previous template', { template: 1, member: 1 }, 'member2: has not distributed generation 2 yet'],
    ['a member that has the template but not its status yet', { template: 2, member: 2, observed: 1 }, 'member2: has not distributed generation 2 yet'],
  ])('keeps observedGeneration until every member has the generation: %s', async (_, behind, message) => {
    const rd = (await interpret('aggregateStatus', {
      'desired-file': [template(2, 1)],
      'status-file': [item('member1', memberStatus({ desired: 2, succeeded: 2 }), { template: 2, member: 2 }), item('member2', memberStatus({ desired: 3, succeeded: 3 }), behind)],
    })) as Aggregated;
    expect(rd.status.observedGeneration).toBe(1);
    expect(conditionOf(rd, 'Ready')).toMatchObject({ status: 'False', reason: 'NotSynced', message });
  });

  it('says why a member was not applied (its webhook refused the distribution)', async () => {
    const refused = { clusterName: 'member2', applied: false, appliedMessage: 'admission webhook denied the request' };
    const rd = (await interpret('aggregateStatus', { 'desired-file': [template(1)], 'status-file': [item('member1', memberStatus({ desired: 1, succeeded: 1 }), { template: 1 }), refused] })) as Aggregated;
    expect(rd.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
    expect(rd.status.observedGeneration).toBeUndefined();
    expect(conditionOf(rd, 'Ready')).toMatchObject({ status: 'False', message: 'member2: not applied: admission webhook denied the request' });
  });

  it.each([
    ['Ready True for its generation', memberStatus({ desired: 1, succeeded: 1 }), 1, true],
    ['Ready False', memberStatus({ desired: 2, succeeded: 1 }, ['gone']), 1, false],
    ['a generation not distributed yet', memberStatus({ desired: 1, succeeded: 1 }), 2, false],
    ['OpenKruise status without Ready, nothing failing', { ...memberStatus({ desired: 1, succeeded: 1 }), conditions: memberStatus({ desired: 1, succeeded: 1 }).conditions.slice(0, 6) }, 1, true],
  ])('reads a member as healthy or not: %s', async (_, status, generation, healthy) => {
    const observed = { ...template(generation), status: { ...status, observedGeneration: 1 } };
    expect(await interpret('interpretHealth', { 'observed-file': [observed] })).toBe(healthy);
  });
});
