/**
 * The API process's configuration, parsed once from the environment (see `config/`): every problem is
 * printed and the process exits non-zero; the result is frozen. The Temporal connection comes from the
 * TEMPORAL_* variables through `@temporalio/envconfig`.
 */
import { z } from 'zod';
import { loadEnvOrExit, type ParsedEnv } from '../config';
import { defaultTaskQueue } from '../core/definitions';
import { parseStaticTokens } from './auth';

/** The environment variables the API reads (besides TEMPORAL_*). */
export const apiEnvSchema = z.object({
  HOMEOSTAT_TASK_QUEUE: z.string().min(1).default(defaultTaskQueue),
  KUBECONFIG: z.string().min(1).optional(),
  /** @default 8080 */
  HOMEOSTAT_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** @default 0.0.0.0 */
  HOMEOSTAT_API_HOST: z.string().min(1).default('0.0.0.0'),
  /** `token=user[:group,group];…` — for local use only; unset (off) by default. */
  HOMEOSTAT_API_STATIC_TOKENS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (!text) return [];
      try {
        return parseStaticTokens(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** @default 600 */
  HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(600),
  /** @default 30 */
  HOMEOSTAT_API_RECONCILE_WAIT_SECONDS: z.coerce.number().positive().max(300).default(30),
  HOMEOSTAT_TEMPORAL_UI_URL: z.url().optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
});

/** The parsed API configuration. */
export type ApiConfig = Readonly<z.output<typeof apiEnvSchema>>;

/** Parses the environment; on error prints every problem and exits with status 2. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ParsedEnv<ApiConfig> {
  return loadEnvOrExit('api', apiEnvSchema, env);
}
