// kube-apiserver's own /metrics, read with a kubeconfig's credentials (an admin may read them):
// what the API server itself counted, for tests and the bench.
import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** The exposition text of kube-apiserver's /metrics. */
export async function apiserverMetrics(kc: KubeConfig): Promise<string> {
  const options: Record<string, unknown> = {};
  await kc.applyToHTTPSOptions(options);
  return new Promise<string>((resolve, reject) => {
    const req = request(`${kc.getCurrentCluster()?.server ?? ''}/metrics`, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`kube-apiserver /metrics answered ${String(res.statusCode)}`))));
    });
    req.on('error', reject);
    req.end();
  });
}
