/**
 * The worker's configuration, parsed once from the environment at start (see `config/`): every
 * problem is printed and the process exits non-zero; the result is frozen. The Temporal connection
 * comes from the TEMPORAL_* variables through `@temporalio/envconfig`. No other worker file reads
 * `process.env`.
 */
import { z } from 'zod';
import { loadEnvOrExit, type ParsedEnv } from '../config';
import { workerVersioningEnvSchema } from '../config/worker-versioning';
import { defaultTaskQueue } from '../core/definitions';

/** The environment variables the worker reads (besides TEMPORAL_*). */
export const workerEnvSchema = z.object({
  /** @default homeostat */
  HOMEOSTAT_TASK_QUEUE: z.string().min(1).default(defaultTaskQueue),
  /** Path of a kubeconfig; unset means in-cluster or ~/.kube/config. */
  KUBECONFIG: z.string().min(1).optional(),
  /** Path of a prebuilt workflow bundle (JavaScript); unset means bundle at start. */
  HOMEOSTAT_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  HOMEOSTAT_WORKER_IDENTITY: z.string().min(1).optional(),
  /** Port of /healthz, /readyz and /metrics (0: any free port). @default 8080 */
  HOMEOSTAT_WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Activities run at once by this worker. @default 20 */
  HOMEOSTAT_WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().positive().default(20),
  /** Object workflows kept in the worker's cache (0: none); unset: the SDK's share of the heap. See README "Sizing". */
  HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(1_000_000).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
  ...workerVersioningEnvSchema.shape,
});

/** The parsed worker configuration. */
export type WorkerConfig = Readonly<z.output<typeof workerEnvSchema>>;

/** Parses the environment; on error prints every problem and exits with status 2. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): ParsedEnv<WorkerConfig> {
  return loadEnvOrExit('worker', workerEnvSchema, env);
}
