// `npm run dev`: a local Kubernetes control plane with the CRD, resource-distributor in local mode
// (webhooks registered by URL) and the example policies, until Ctrl-C.
import { execFile } from 'node:child_process';
import { mkdir, rm, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { startLocalServer, type RunningServer } from '../src/main.js';
import { ensureTool, POLICIES_DIR, REPO_ROOT, startLocalCluster, type ControlPlane } from '../test/control-plane/index.js';
import { connectionOf } from '../test/kube-client.js';

/** Git-ignored: `kubectl`, linked to the one built from the servers' Kubernetes module. */
const LOCAL_BIN = join(REPO_ROOT, '.local', 'bin');

async function linkKubectl(): Promise<string> {
  const built = await ensureTool('kubectl');
  await mkdir(LOCAL_BIN, { recursive: true });
  const link = join(LOCAL_BIN, 'kubectl');
  await rm(link, { force: true });
  await symlink(built, link);
  return built;
}

/**
 * The policies go in as users then apply them: `kubectl apply --server-side`, so that the field
 * manager records what was applied, and an edited policy applied again loses the keys it no
 * longer has (an object created without that record keeps them). Server-side too because a
 * distribution listing thousands of names exceeds the 256 KiB of client-side apply's annotation.
 */
async function applyPolicies(kubectl: string, kubeconfig: string): Promise<void> {
  const { stdout, stderr } = await promisify(execFile)(kubectl, ['apply', '--server-side', '-f', POLICIES_DIR], { env: { ...process.env, KUBECONFIG: kubeconfig } });
  process.stdout.write(stderr + stdout);
}

function usage(plane: ControlPlane, server: RunningServer, kubectl: string): string {
  const kubeconfig = relative(process.cwd(), plane.kubeconfigPath) || plane.kubeconfigPath;
  return [
    '',
    `Kubernetes API server: ${plane.serverUrl} (admin kubeconfig: ${kubeconfig})`,
    '',
    `resource-distributor: https://127.0.0.1:${server.port} (webhooks ${server.config.webhookNames.distributions},`,
    `  ${server.config.webhookNames.namespaces}${server.config.webhookNames.pods ? `, ${server.config.webhookNames.pods} (mutating)` : ''}; certificates in ${relative(process.cwd(), server.config.certDir) || server.config.certDir}/;`,
    `  metrics: curl -k https://127.0.0.1:${server.port}/metrics)`,
    '',
    `  export KUBECONFIG=${plane.kubeconfigPath} PATH=${LOCAL_BIN}:$PATH`,
    '  kubectl get resourcedistributions,objectsyncs -A',
    '  kubectl create namespace x && kubectl get configmaps,secrets -n x   # copies appear at once',
    '  kubectl apply --server-side -f policies/                           # as they went in: edits and removed keys apply',
    '',
    'Settings: the RD_* environment variables of docs/reference/configuration.md (RD_PORT defaults to 9443 here,',
    'RD_LOG_LEVEL to info).',
    '',
    `kubectl: ${kubectl} (linked from ${relative(process.cwd(), LOCAL_BIN) || LOCAL_BIN}/); any kubectl of v1.33 to v1.35 works too.`,
    '',
    'Press Ctrl-C to stop and remove everything.',
    '',
  ].join('\n');
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    const onSignal = (signal: NodeJS.Signals): void => {
      for (const s of signals) process.off(s, onSignal);
      resolve(signal);
    };
    for (const s of signals) process.on(s, onSignal);
  });
}

async function main(): Promise<void> {
  // The policies go in once the webhook runs, so that they are validated like any other.
  const kubectl = await linkKubectl();
  const plane = await startLocalCluster({ manifests: [] });
  let server: RunningServer | undefined;
  try {
    server = await startLocalServer({
      connection: connectionOf(plane.kubeConfig),
      env: {
        RD_PORT: '9443',
        RD_LOG_LEVEL: 'info',
        // Only this control plane's API server may send reviews, as in a cluster set up for it.
        RD_WEBHOOK_CLIENT_CA_FILE: plane.webhookClient.caFile,
        RD_WEBHOOK_CLIENT_NAMES: plane.webhookClient.commonName,
        // The CRD's conversion webhook (v1alpha1 <-> v1beta1) is this process, as the replicas are in a cluster.
        RD_REGISTER_CONVERSION: 'true',
        ...process.env,
      },
      certDir: join(REPO_ROOT, 'certs'),
    });
    await applyPolicies(kubectl, plane.kubeconfigPath);
  } catch (error) {
    // A running server would keep the process alive (and its webhooks registered).
    await server?.stop();
    await plane.stop();
    throw error;
  }
  console.log(usage(plane, server, kubectl));
  const signal = await untilSignal();
  console.log(`${signal}: stopping`);
  await server.stop();
  await plane.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
