/**
 * The bridge's configuration, parsed once from the environment (docs/conventions.md). The Temporal
 * connection comes from the TEMPORAL_* variables through `@temporalio/envconfig` (see `config/`);
 * the Kubernetes connection is the kubeconfig (KUBECONFIG) or the in-cluster service account.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { loadEnvOrExit, parseEnv, type ParsedEnv } from '../config';
import { fairnessModeEnv, fairnessWeightsEnv } from '../config/fairness-weights';
import { defaultTaskQueue } from '../core/definitions';

const ownerKind = z.object({ group: z.string(), kind: z.string().min(1) });

/** The zod schema of one {@link WatchedResource} (as JSON in HOMEOSTAT_BRIDGE_RESOURCES). */
export const watchedResourceSchema = z.object({
  group: z.string(),
  version: z.string().min(1),
  plural: z.string().min(1),
  kind: z.string().min(1),
  namespaced: z.boolean(),
  owners: z.array(ownerKind).optional(),
  referrers: z.array(ownerKind).optional(),
  metadataOnly: z.boolean().optional(),
  watchStatus: z.boolean().optional(),
  labelSelector: z.string().optional(),
  relevantLabels: z.array(z.string()).optional(),
  relevantAnnotations: z.array(z.string()).optional(),
});

const jsonResources = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not JSON: ${(err as Error).message}` });
    return z.NEVER;
  }
});

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const seconds = z.coerce.number().positive();

/** The environment variables the bridge reads. */
export const bridgeEnvSchema = z.object({
  KUBECONFIG: z.string().optional(),
  HOMEOSTAT_TASK_QUEUE: z.string().default(defaultTaskQueue),
  /**
   * Fairness weights by Kubernetes namespace for the object workflows it starts: `team-a=2,batch=0.25`
   * (`_cluster`: cluster-scoped objects). Unset: every namespace weighs 1. See `core/fairness.ts`.
   */
  HOMEOSTAT_FAIRNESS: fairnessModeEnv,
  HOMEOSTAT_FAIRNESS_WEIGHTS: fairnessWeightsEnv,
  /**
   * JSON array of watched resources (an explicit override: no discovery); unset: the operator's kinds,
   * the kinds they own and the kinds they reference, resolved through API discovery.
   */
  HOMEOSTAT_BRIDGE_RESOURCES: jsonResources.pipe(z.array(watchedResourceSchema).min(1)).optional(),
  HOMEOSTAT_BRIDGE_NAMESPACE: z.string().optional(),
  HOMEOSTAT_BRIDGE_LABEL_SELECTOR: z.string().optional(),
  HOMEOSTAT_BRIDGE_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOMEOSTAT_BRIDGE_LEADER_ELECTION: bool.default(true),
  HOMEOSTAT_BRIDGE_LEASE_NAMESPACE: z.string().default('default'),
  HOMEOSTAT_BRIDGE_LEASE_NAME: z.string().default('homeostat-informer-bridge'),
  HOMEOSTAT_BRIDGE_IDENTITY: z.string().default(`${hostname()}_${process.pid}`),
  HOMEOSTAT_BRIDGE_LEASE_SECONDS: seconds.default(15),
  HOMEOSTAT_BRIDGE_RENEW_DEADLINE_SECONDS: seconds.default(10),
  HOMEOSTAT_BRIDGE_RETRY_PERIOD_SECONDS: seconds.default(2),
  HOMEOSTAT_BRIDGE_RESYNC_SECONDS: seconds.default(300),
  HOMEOSTAT_BRIDGE_WATCH_TIMEOUT_SECONDS: seconds.default(300),
  HOMEOSTAT_BRIDGE_INACTIVITY_SECONDS: seconds.default(300),
  HOMEOSTAT_BRIDGE_CONCURRENCY: z.coerce.number().int().positive().default(16),
  /**
   * Passes in flight at most (a create, spec change or deletion delivered and not yet seen observed in
   * the object's status); `0`: no bound. See docs/fairness.md, "Admission".
   */
  HOMEOSTAT_BRIDGE_MAX_PASSES_IN_FLIGHT: z.coerce.number().int().min(0).max(100_000).default(32),
  /** Of those, the passes one namespace may hold at once (its objects wait meanwhile, others' go on). */
  HOMEOSTAT_BRIDGE_MAX_PASSES_IN_FLIGHT_PER_NAMESPACE: z.coerce.number().int().min(1).max(100_000).default(8),
  /** A pass not seen done after this long stops holding its slot. */
  HOMEOSTAT_BRIDGE_PASS_HOLD_SECONDS: seconds.default(10),
  HOMEOSTAT_BRIDGE_SHUTDOWN_FLUSH_SECONDS: seconds.default(10),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

/** The parsed configuration. */
export type BridgeConfig = Readonly<z.infer<typeof bridgeEnvSchema>>;

/** Parses `env` (the bridge's variables only); throws a `ConfigError` listing every problem. */
export function parseBridgeConfig(env: Record<string, string | undefined>): BridgeConfig {
  return parseEnv('informer-bridge', bridgeEnvSchema, env).config;
}

/** Parses the environment with the Temporal connection; on error prints every problem and exits with status 2. */
export function loadBridgeConfig(env: Record<string, string | undefined> = process.env): ParsedEnv<BridgeConfig> {
  return loadEnvOrExit('informer-bridge', bridgeEnvSchema, env);
}
