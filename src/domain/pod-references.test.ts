import { describe, expect, it } from 'vitest';
import { podReferences } from './pod-references.js';

const pod = (spec: object): object => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });

describe('the Secrets and ConfigMaps a pod references', () => {
  it.each([
    ['nothing', pod({ containers: [{ name: 'a', image: 'nginx' }] }), [], []],
    ['image-pull Secrets (merged from the ServiceAccount)', pod({ imagePullSecrets: [{ name: 'registry' }, { name: 'mirror' }] }), ['mirror', 'registry'], []],
    ['secret and configMap volumes', pod({ volumes: [{ name: 'v1', secret: { secretName: 'tls' } }, { name: 'v2', configMap: { name: 'settings' } }, { name: 'v3', emptyDir: {} }] }), ['tls'], ['settings']],
    [
      'projected sources',
      pod({ volumes: [{ name: 'p', projected: { sources: [{ secret: { name: 'a' } }, { configMap: { name: 'b' } }, { serviceAccountToken: { path: 't' } }] } }] }),
      ['a'],
      ['b'],
    ],
    [
      'env valueFrom and envFrom in init, regular and ephemeral containers',
      pod({
        initContainers: [{ name: 'i', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'init-secret', key: 'k' } } }] }],
        containers: [{ name: 'c', env: [{ name: 'Y', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'k' } } }, { name: 'Z', value: 'plain' }], envFrom: [{ secretRef: { name: 'env-secret' } }] }],
        ephemeralContainers: [{ name: 'e', envFrom: [{ configMapRef: { name: 'debug-config' } }] }],
      }),
      ['env-secret', 'init-secret'],
      ['app-config', 'debug-config'],
    ],
    ['a name repeated counts once', pod({ imagePullSecrets: [{ name: 'r' }], volumes: [{ name: 'v', secret: { secretName: 'r' } }] }), ['r'], []],
    ['malformed parts are skipped, never thrown', pod({ imagePullSecrets: 'r', volumes: [null, 3, { secret: { secretName: 7 } }], containers: [{ env: 'x', envFrom: [null] }] }), [], []],
    ['no spec at all', { kind: 'Pod' }, [], []],
  ])('%s', (_what, object, secrets, configMaps) => {
    const refs = podReferences(object);
    expect([[...refs.secrets].sort(), [...refs.configMaps].sort()]).toEqual([secrets, configMaps]);
  });
});
