import type { TestProject } from 'vitest/node';
import { join } from 'node:path';
import { applyManifestFiles, CRD_DIR, ensureLua, ensureTool, kubernetesModuleDir, kubernetesVersion, startControlPlane, startConversionServer, waitForCrdEstablished, type ToolName } from '../control-plane/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
    /** What the API server presents to webhooks (see ControlPlane.webhookClient). */
    webhookClient: { caFile: string; caKeyFile: string; commonName: string };
    /** Paths of the Go-built tools of the chart, monitoring and health tests (the node tier builds helm and kubectl only). */
    tools: Partial<Record<ToolName, string>>;
    /** The Lua 5.1 interpreter the Argo CD health check runs under (installed with apt-get when missing). */
    lua: string;
    /** The run's conversion webhook of the ResourceDistribution CRD (see test/control-plane/conversion-server.ts). */
    conversion: { url: string; caPem: string };
    /** The version of the wrapper module the servers were built from (RD_KUBERNETES_VERSION selects one: npm run test:k8s-versions). */
    kubernetesVersion: string;
  }
}

const CRD_NAME = 'resourcedistributions.apps.kruise.io';

/** One after the other (each is a Go build on first use, heavy on a small machine), while the control plane starts. */
async function ensureTools(): Promise<Record<Exclude<ToolName, 'kruise-manager'>, string>> {
  const kubectl = await ensureTool('kubectl');
  const helm = await ensureTool('helm');
  const promtool = await ensureTool('promtool');
  const kustomize = await ensureTool('kustomize');
  const kstatus = await ensureTool('kstatus');
  return { kubectl, helm, promtool, kustomize, kstatus };
}

/** One control plane for the whole e2e run; the returned function tears it down. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const tools = ensureTools();
  // Awaited below; a failure must not go unhandled while the control plane starts.
  tools.catch(() => undefined);
  const plane = await startControlPlane({
    // Before kube-controller-manager, so that its garbage collector knows the type from the start.
    beforeControllerManager: async (kc) => {
      await applyManifestFiles(kc, [CRD_DIR]);
      await waitForCrdEstablished(kc, CRD_NAME);
    },
  });
  let conversion: Awaited<ReturnType<typeof startConversionServer>> | undefined;
  try {
    conversion = await startConversionServer(plane.kubeConfig);
    project.provide('conversion', { url: conversion.url, caPem: conversion.caPem });
    project.provide('tools', await tools);
    project.provide('lua', await ensureLua((line) => console.error(`[e2e] ${line}`)));
  } catch (error) {
    await conversion?.stop();
    await plane.stop();
    throw error;
  }
  project.provide('kubeconfigPath', plane.kubeconfigPath);
  project.provide('kubernetesVersion', await kubernetesVersion(join(await kubernetesModuleDir(), 'go.mod')));
  project.provide('webhookClient', plane.webhookClient);
  return async () => {
    await conversion?.stop();
    await plane.stop();
  };
}
