import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { applyManifestFiles, CRD_DIR, ensureKarmada, ensureLua, ensureTool, REPO_ROOT, startKarmadaPlane, joinMember } from '../control-plane/index.js';
import { startMember, startProductOn, type RunningMember } from './members.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Karmada API server's admin kubeconfig (where distributions are created for the fleet). */
    fleetKubeconfigPath: string;
    /** The member clusters joined at the start, in order. */
    members: { name: string; kubeconfigPath: string }[];
    /** Every process of the tier (Karmada plane, members, products), for its memory. */
    processes: { name: string; pid: number }[];
    karmadactl: string;
  }
}

export const INTEGRATION_DIR = join(REPO_ROOT, 'integrations', 'karmada');
const MEMBER_NAMES = ['member1', 'member2'];

const log = (line: string): void => console.error(`[fleet] ${line}`);

/** A Karmada plane with our CRD, interpreter, policy and admission webhook; two members each running the product. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const stops: (() => Promise<void>)[] = [];
  const teardown = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => log(`teardown: ${String(error)}`));
  };
  try {
    const karmadactl = await ensureKarmada('karmadactl', { log });
    // What the fleet's distribution looks like to Flux (kstatus) and Argo CD (our Lua check).
    project.provide('tools', { kstatus: await ensureTool('kstatus', { log }) });
    project.provide('lua', await ensureLua(log));
    const fleet = await startKarmadaPlane({ log, crdPaths: [CRD_DIR] });
    stops.push(() => fleet.stop());
    await applyManifestFiles(fleet.plane.kubeConfig, [INTEGRATION_DIR]);
    const admission = await startProductOn('fleet', fleet.plane.kubeconfigPath, { RD_RECONCILE: 'false' });
    stops.push(() => admission.stop());
    const members: RunningMember[] = [];
    for (const name of MEMBER_NAMES) {
      const member = await startMember(name, log);
      stops.push(() => member.stop());
      members.push(member);
      await joinMember(fleet.plane.kubeConfig, name, member.plane);
    }
    log(`fleet of ${members.length} members ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    project.provide('fleetKubeconfigPath', fleet.plane.kubeconfigPath);
    project.provide('kubeconfigPath', fleet.plane.kubeconfigPath);
    project.provide('members', members.map((m) => ({ name: m.name, kubeconfigPath: m.plane.kubeconfigPath })));
    project.provide('karmadactl', karmadactl);
    project.provide('processes', [
      ...fleet.plane.pids(),
      ...fleet.components.map((c) => ({ name: c.name, pid: c.pid })),
      { name: 'product (fleet admission)', pid: admission.product.child.pid! },
      ...members.flatMap((m) => [...m.plane.pids().map((p) => ({ name: `${m.name} ${p.name}`, pid: p.pid })), { name: `${m.name} product`, pid: m.product.child.pid! }]),
    ]);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}
