import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueServingCert } from '../../control-plane/index.js';

export interface AdmissionCall {
  operation: string;
  namespace: string;
  name: string;
  user: string;
}

export interface RecordingWebhook {
  /** `https://127.0.0.1:<port>`; any path is accepted. */
  url: string;
  /** PEM of the CA that signed the serving certificate (for `caBundle`). */
  caCert: string;
  calls: AdmissionCall[];
  close(): Promise<void>;
}

interface AdmissionReview {
  request?: {
    uid?: string;
    operation?: string;
    namespace?: string;
    name?: string;
    userInfo?: { username?: string };
  };
}

export interface RecordingWebhookOptions {
  /**
   * How long to hold a call before answering, given how many others are being held: a slow
   * webhook (a policy engine, say) lets a write that came later reach storage first.
   */
  holdMs?: (othersHeld: number) => number;
}

/** A validating webhook that allows everything and records who asked for what. */
export async function startRecordingWebhook(options: RecordingWebhookOptions = {}): Promise<RecordingWebhook> {
  const ca = await createCertificateAuthority('smoke-webhook-ca');
  const serving = await issueServingCert(ca, 'smoke-webhook');
  const calls: AdmissionCall[] = [];
  let held = 0;

  const server: Server = createServer({ key: serving.key, cert: serving.cert }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const review = JSON.parse(body) as AdmissionReview;
      const request = review.request ?? {};
      calls.push({
        operation: request.operation ?? '',
        namespace: request.namespace ?? '',
        name: request.name ?? '',
        user: request.userInfo?.username ?? '',
      });
      const answer = (): void => {
        res.setHeader('Content-Type', 'application/json');
        // The uid must be echoed or the API server counts the call as failed.
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: true } }));
      };
      const holdMs = options.holdMs?.(held) ?? 0;
      if (holdMs <= 0) return answer();
      held += 1;
      setTimeout(() => {
        held -= 1;
        answer();
      }, holdMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    caCert: ca.cert,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
