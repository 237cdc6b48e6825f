/**
 * Process configuration shared by the worker, the informer bridge and the API: one zod schema per
 * process parsed once at start ({@link parseEnv}, {@link loadEnvOrExit}), the Temporal connection
 * through `@temporalio/envconfig` ({@link resolveTemporal}) and the Kubernetes credentials
 * ({@link loadKubeConfig}).
 */
export { ConfigError, describeIssues, loadEnvOrExit, parseEnv, type ParsedEnv } from './env';
export { loadKubeConfig, shareConnections } from './kube';
export { defaultTemporalAddress, defaultTemporalNamespace, resolveTemporal, type TemporalSettings } from './temporal';
