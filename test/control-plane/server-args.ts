import { join } from 'node:path';
import type { ControlPlanePki } from './pki.js';

export interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
}

export function etcdArgs(dir: string, ports: Ports): string[] {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return [
    '--name=default',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=default=${peer}`,
    // Throwaway data: durability only costs time here.
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ];
}

/**
 * The API server's admission configuration: both webhook plugins present the webhook client
 * certificate to every webhook (user `*` of the kubeconfig), so that a webhook can tell the API
 * server from anyone else who reaches its port.
 */
export function admissionConfigFiles(dir: string, pki: ControlPlanePki): { path: string; text: string }[] {
  const kubeconfig = join(dir, 'admission-kubeconfig.yaml');
  const config = join(dir, 'admission-config.yaml');
  const user = { name: '*', user: { 'client-certificate': pki.files.webhookClientCert, 'client-key': pki.files.webhookClientKey } };
  const plugin = (name: string) => ({
    name,
    configuration: { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig },
  });
  return [
    { path: kubeconfig, text: JSON.stringify({ apiVersion: 'v1', kind: 'Config', users: [user] }) },
    {
      path: config,
      text: JSON.stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AdmissionConfiguration',
        plugins: [plugin('ValidatingAdmissionWebhook'), plugin('MutatingAdmissionWebhook')],
      }),
    },
  ];
}

/** The flags envtest uses, plus an explicit serving certificate, service-account keys and the admission configuration. */
export function apiserverArgs(dir: string, ports: Ports, pki: ControlPlanePki, { serviceAccountAdmission = false } = {}): string[] {
  const { files } = pki;
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${ports.apiserver}`,
    // Only used if a certificate is missing; keeps anything it would write inside our dir.
    `--cert-dir=${join(dir, 'apiserver-certs')}`,
    `--tls-cert-file=${files.servingCert}`,
    `--tls-private-key-file=${files.servingKey}`,
    `--client-ca-file=${files.caCert}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    `--service-account-issuer=https://127.0.0.1:${ports.apiserver}`,
    `--service-account-key-file=${files.serviceAccountPub}`,
    `--service-account-signing-key-file=${files.serviceAccountKey}`,
    '--authorization-mode=RBAC',
    // Without the ServiceAccount controller (StartControlPlaneOptions.workloads) no namespace gets
    // its `default` ServiceAccount, and the plugin would reject every pod.
    ...(serviceAccountAdmission ? [] : ['--disable-admission-plugins=ServiceAccount']),
    '--allow-privileged=true',
    `--admission-control-config-file=${join(dir, 'admission-config.yaml')}`,
  ];
}

/**
 * What one Kubernetes minor needs beyond apiserverArgs: from v1.37 the API server refuses a
 * loopback advertise address while it keeps the `kubernetes` Service's endpoints, so no reconciler
 * keeps them (clients here reach the API server by its URL; the node tier routes the Service IP
 * itself).
 */
export function apiserverVersionArgs(kubernetesVersion: string): string[] {
  const minor = Number(kubernetesVersion.replace(/^v/, '').split('.')[1]);
  return minor >= 37 ? ['--endpoint-reconciler-type=none'] : [];
}

/**
 * The garbage collector (ownerReference cascading deletion) and the namespace controller
 * (finishing namespace deletion), the behaviours the product relies on; and the ClusterRole
 * aggregation controller, so that the built-in admin, edit and view roles hold their rules and a
 * user can try the access checks with `kubectl create rolebinding --clusterrole=edit`.
 */
export function controllerManagerArgs(kubeconfigPath: string, extraControllers: readonly string[], rootCaFile: string): string[] {
  const controllers = ['garbage-collector-controller', 'namespace-controller', 'clusterrole-aggregation-controller', ...extraControllers];
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--controllers=${controllers.join(',')}`,
    // What root-ca-cert-publisher puts into every namespace's kube-root-ca.crt (pods' token volumes).
    `--root-ca-file=${rootCaFile}`,
    '--leader-elect=false',
    '--secure-port=0',
    // The default 20 requests a second make the namespace controller take about 100 s per 20
    // namespaces it deletes (a list and a delete of every namespaced kind in each): the hundreds a
    // test run removes would keep it busy for most of an hour, and the garbage collector with it.
    '--kube-api-qps=500',
    '--kube-api-burst=1000',
  ];
}

/** The one scheduler of the plane: no election, no serving port (nothing scrapes or probes it). */
export function schedulerArgs(kubeconfigPath: string): string[] {
  return [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0'];
}
