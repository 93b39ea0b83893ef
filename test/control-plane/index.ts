export { ensureBinaries, ensureTool, ensureBenchProgram, binaryCacheDir, type BenchProgram, type BinaryPaths, type EnsureBinariesOptions, type ToolName } from './binaries.js';
export { startControlPlane, type ControlPlane, type RestartableServer, type RestartOptions, type StartControlPlaneOptions } from './control-plane.js';
export { applyManifestFiles, readManifests, waitForCrdEstablished } from './manifests.js';
export { createCertificateAuthority, issueClientCert, issueServingCert, type KeyAndCert } from './pki.js';
export { startLocalCluster, CRD_DIR, POLICIES_DIR, LOCAL_KUBECONFIG, REPO_ROOT, type LocalClusterOptions } from './local-cluster.js';
