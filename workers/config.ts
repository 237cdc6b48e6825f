/**
 * The worker's configuration, parsed once from the environment at start: every issue is printed and
 * the process exits non-zero; the result is frozen. No other worker file reads `process.env`.
 */
import { z } from 'zod';

const schema = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('homeostat'),
  HOMEOSTAT_TASK_QUEUE: z.string().min(1).default('homeostat'),
  /** Path of a kubeconfig; unset means in-cluster or ~/.kube/config. */
  KUBECONFIG: z.string().min(1).optional(),
  /** Path of a prebuilt workflow bundle (JavaScript); unset means bundle at start. */
  HOMEOSTAT_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  HOMEOSTAT_WORKER_IDENTITY: z.string().min(1).optional(),
  /** Port of /healthz, /readyz and /metrics (0: any free port). @default 8080 */
  HOMEOSTAT_WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
});

/** The parsed worker configuration. */
export type WorkerConfig = Readonly<z.output<typeof schema>>;

/** Parses the environment; on error prints every issue and exits with status 2. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      process.stderr.write(`config: ${issue.path.join('.')}: ${issue.message}\n`);
    }
    process.exit(2);
  }
  return Object.freeze(parsed.data);
}
