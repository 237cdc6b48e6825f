/**
 * Process configuration shared by the worker, the informer bridge and the API: one zod schema per
 * process parsed once at start ({@link parseEnv}, {@link loadEnvOrExit}), the Temporal connection
 * through `@temporalio/envconfig` ({@link resolveTemporal}), the payload keys
 * ({@link resolvePayloadCodec}) and the Kubernetes credentials ({@link loadKubeConfig}).
 */
export { ConfigError, describeIssues, loadEnvOrExit, parseEnv, type ParsedEnv } from './env';
export { loadKubeConfig, shareConnections } from './kube';
export {
  dataConverterOf,
  defaultTemporalAddress,
  defaultTemporalNamespace,
  resolveTemporal,
  type TemporalSettings,
} from './temporal';
export { parsePayloadKeys, payloadKeysEnvSchema, resolvePayloadCodec } from './payload-keys';
