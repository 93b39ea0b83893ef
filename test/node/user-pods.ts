// Users' pods on the node (bound by the test: spec.nodeName), and the statistics of their start times.
import type { V1Pod } from '@kubernetes/client-node';
import { NODE_IMAGES } from '../control-plane/index.js';

/** A user's pod: reads the distributed ConfigMap and Secret from volumes, names the distributed pull Secret. */
export function userPod(nodeName: string, settings: string, token: string, pull: string): V1Pod {
  return {
    metadata: { name: 'app' },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: pull }],
      containers: [
        {
          name: 'app',
          image: NODE_IMAGES.busybox,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', 'test -s /settings/color && test -s /token/token && exec sleep 3600'],
          volumeMounts: [
            { name: 'settings', mountPath: '/settings', readOnly: true },
            { name: 'token', mountPath: '/token', readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: 'settings', configMap: { name: settings } },
        { name: 'token', secret: { secretName: token } },
      ],
    },
  };
}

/** The p-th percentile (0-100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** A pod that pulls `image` (never present: `Always`) and runs node in it. */
export function pullingPod(nodeName: string, imageName: string): V1Pod {
  return {
    metadata: { name: 'app' },
    spec: {
      nodeName,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      containers: [{ name: 'app', image: imageName, imagePullPolicy: 'Always', command: ['node', '-e', 'console.log("pulled")'] }],
    },
  };
}
