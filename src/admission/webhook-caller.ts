// Who may call the webhooks: when a client CA is configured, only a peer that presented a
// certificate signed by it during the TLS handshake (and, if names are given, one whose common
// name is among them). The API server presents such a certificate when its AdmissionConfiguration
// names a kubeconfig for webhooks. The handshake itself does not require a certificate, so that
// the kubelet's probes and Prometheus (which authenticates with a token) still reach /healthz,
// /readyz and /metrics; the webhook routes refuse a caller without one.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

export interface WebhookCallerPolicy {
  /** Accepted certificate common names; empty: any certificate the CA signed. */
  names: readonly string[];
}

/** Undefined: the caller may send reviews; otherwise why not (for the 401 answer). */
export type CallerRefusal = string | undefined;

export function checkWebhookCaller(incoming: IncomingMessage | undefined, policy: WebhookCallerPolicy): CallerRefusal {
  const socket = incoming?.socket as TLSSocket | undefined;
  if (socket?.authorized !== true) {
    return 'a client certificate signed by the configured webhook client CA is required (the API server presents one through its AdmissionConfiguration)';
  }
  if (policy.names.length === 0) return undefined;
  const commonName: unknown = socket.getPeerCertificate().subject.CN;
  const names = Array.isArray(commonName) ? commonName : [commonName];
  if (names.some((name) => typeof name === 'string' && policy.names.includes(name))) return undefined;
  return `the client certificate's common name is not one of RD_WEBHOOK_CLIENT_NAMES`;
}
