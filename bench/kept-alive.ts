// Kept-alive connections to the API server, for the requests whose send time starts a timed
// round (a distribution's update, a source's replace). The generated client opens a new TLS
// connection for every request; timed from such a request, a round would include a handshake
// that the client-go loop's rounds do not (its clock starts after a warm-up request on its
// connection). The read before each timed write warms this connection the same way; requests
// sent at once each get a connection of their own.
import { Agent, request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export class KeptAliveConnection {
  private constructor(
    private readonly server: URL,
    private readonly options: RequestOptions,
  ) {}

  static async open(kc: KubeConfig): Promise<KeptAliveConnection> {
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig names no current cluster');
    const tls: RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const { ca, cert, key, headers } = tls;
    const agent = new Agent({ keepAlive: true, ca, cert, key, ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}) });
    return new KeptAliveConnection(new URL(cluster.server), { agent, headers: { ...headers, accept: 'application/json' } });
  }

  get<T>(path: string): Promise<T> {
    return this.send<T>('GET', path);
  }

  /** Resolves with the answer; `sent` is told as the request goes out (written to a kept-alive socket, or queued for one still opening). */
  put<T>(path: string, body: unknown, sent?: () => void): Promise<T> {
    return this.send<T>('PUT', path, JSON.stringify(body), sent);
  }

  close(): void {
    (this.options.agent as Agent).destroy();
  }

  private send<T>(method: string, path: string, body?: string, sent?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const headers = { ...this.options.headers, ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) };
      const req = request(new URL(path, this.server), { ...this.options, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(JSON.parse(text) as T);
          else reject(Object.assign(new Error(`${method} ${path}: HTTP ${status}: ${text.slice(0, 300)}`), { code: status, body: text }));
        });
      });
      req.on('error', reject);
      sent?.();
      req.end(body);
    });
  }
}
