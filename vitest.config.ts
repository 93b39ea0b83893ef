import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          // Migration from kruise-manager built from an OpenKruise source tree (KRUISE_SOURCE):
          // not part of CI, run by `npm run test:kruise-migration`.
          name: 'kruise-migration',
          include: ['test/kruise-migration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 600_000,
          hookTimeout: 1_800_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          // Starts the control plane and a node (kubelet + containerd, root only); a cold machine
          // first installs the node's Debian packages and builds the kubelet.
          globalSetup: ['test/node/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 900_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'fleet',
          include: ['test/fleet/**/*.test.ts'],
          environment: 'node',
          // A Karmada control plane and two member planes, each member running the product; a cold
          // machine first builds Karmada's servers from its Go module.
          globalSetup: ['test/fleet/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
