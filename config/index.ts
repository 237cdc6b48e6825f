/**
 * Process configuration shared by the worker, the informer bridge and the API: one zod schema per
 * process parsed once at start ({@link parseEnv}, {@link loadEnvOrExit}), the Temporal connection
 * through `@temporalio/envconfig` ({@link resolveTemporal}), the payload keys
 * ({@link resolvePayloadCodec}), the Kubernetes credentials ({@link loadKubeConfig}) and tracing
 * ({@link resolveTracing}, {@link startTracing}, trace context in Temporal headers and log lines).
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
export { resolveTracing, startTracing, tracingOff, type TracingSettings } from './tracing';
export { traceContextClientInterceptor, traceContextOf, traceCarrierOf } from './trace-headers';
export { traceLogFields } from './log-trace-fields';
