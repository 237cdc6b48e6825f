/**
 * homeostat's runtime (`homeostat/runtime`): the processes that run an operator — the worker, the
 * informer bridge, the HTTP API, all three in one process, and the command line — each taking the one
 * operator value from `defineOperator`. A team's own binary is one line:
 *
 * ```ts
 * #!/usr/bin/env node
 * import { runCli } from 'homeostat/runtime';
 * import operator from './operator';
 * void runCli({ operator });
 * ```
 */
export { runWorker, runWorkerOptionsFrom, type RunWorkerOptions } from '../workers/run-worker';
export {
  bundleObjectWorkflows,
  createHomeostatWorker,
  installRuntime,
  runUntilSignalled,
  type HomeostatWorkerOptions,
  type WorkerVersioningOptions,
} from '../workers/create-worker';
export { buildIdFor, deploymentNameFor, type BuildIdParts } from '../workers/deployment-version';
export { runCompatibilityCheck, type CompatibilityCheckOptions } from '../workers/compatibility-check';
export type { CompatibilityReport } from '../core/carried-state';
export { workerMain } from '../workers/main';
export { loadWorkerConfig, workerEnvSchema, type WorkerConfig } from '../workers/config';
export { startBridgeComponent, type RunningBridge } from '../informer-bridge/run-bridge';
export { bridgeMain } from '../informer-bridge/main';
export { loadBridgeConfig, bridgeEnvSchema, type BridgeConfig } from '../informer-bridge/config';
export { watchedResourcesFor, type WatchSource } from '../informer-bridge/operator-resources';
export {
  ApiDiscovery,
  DiscoveryError,
  type DiscoveredResource,
  type ResourceMapper,
} from '../informer-bridge/discovery';
export type { WatchedResource } from '../informer-bridge/types';
export { startApiComponent, type RunningApi } from '../api/run-api';
export { apiMain } from '../api/main';
export { loadApiConfig, apiEnvSchema, type ApiConfig } from '../api/config';
export { allMain } from '../cli/all';
export { runCli, loadOperatorModule, type RunCliOptions } from '../cli/run-cli';
export { runDev, type DevOptions } from '../cli/dev';
export { assertOperator, operatorProblems, plansOf, type Operator } from '../core/operator';
export { AesGcmPayloadCodec, isEncryptedPayload, type PayloadKey } from '../core/payload-codec';
export { parsePayloadKeys } from '../config/payload-keys';
export { codecAccess, type CodecOperation } from '../api/codec-endpoint';
export {
  objectWorkflowStartOptions,
  objectWorkflowType,
  reconcileNowUpdate,
  reconcileRequestedSignal,
  searchAttributeKeys,
  stateQuery,
  workflowIdFor,
  type ObjectState,
  type PassOutcome,
  type ReconcileRequest,
} from '../core/definitions';
