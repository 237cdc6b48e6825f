/**
 * The API process's configuration, parsed once from the environment (see `config/`): every problem is
 * printed and the process exits non-zero; the result is frozen. The Temporal connection comes from the
 * TEMPORAL_* variables through `@temporalio/envconfig`.
 */
import { z } from 'zod';
import { loadEnvOrExit, type ParsedEnv } from '../config';
import { fairnessModeEnv, fairnessWeightsEnv } from '../config/fairness-weights';
import { defaultTaskQueue } from '../core/definitions';
import { defaultAudiences, parseStaticTokens } from './auth';

/** The environment variables the API reads (besides TEMPORAL_*). */
export const apiEnvSchema = z
  .object({
    HOMEOSTAT_TASK_QUEUE: z.string().min(1).default(defaultTaskQueue),
    /**
     * Fairness weights by Kubernetes namespace for the object workflows it starts: `team-a=2,batch=0.25`
     * (`_cluster`: cluster-scoped objects). Unset: every namespace weighs 1. See `core/fairness.ts`.
     */
    HOMEOSTAT_FAIRNESS: fairnessModeEnv,
    HOMEOSTAT_FAIRNESS_WEIGHTS: fairnessWeightsEnv,
    KUBECONFIG: z.string().min(1).optional(),
    /** @default 8080 */
    HOMEOSTAT_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    /** @default 0.0.0.0 */
    HOMEOSTAT_API_HOST: z.string().min(1).default('0.0.0.0'),
    /** PEM certificate (chain) and key the API serves HTTPS with; re-read when the files change. */
    HOMEOSTAT_API_TLS_CERT_FILE: z.string().min(1).optional(),
    HOMEOSTAT_API_TLS_KEY_FILE: z.string().min(1).optional(),
    /** `true` serves plain HTTP (local use only: bearer tokens then travel in clear). @default false */
    HOMEOSTAT_API_INSECURE_HTTP: z.enum(['true', 'false']).default('false'),
    /** Audiences a bearer token must be minted for (comma-separated; empty: the API server's). @default homeostat */
    HOMEOSTAT_API_AUDIENCES: z
      .string()
      .default(defaultAudiences.join(','))
      .transform((t) =>
        t
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean),
      ),
    /** `true` accepts HOMEOSTAT_API_STATIC_TOKENS (local use only; refused inside a cluster). @default false */
    HOMEOSTAT_API_INSECURE_STATIC_TOKENS: z.enum(['true', 'false']).default('false'),
    /**
     * Failed TokenReviews per client address per minute, for tokens local verification cannot judge,
     * before such tokens get 429 (no TokenReview). @default 30
     */
    HOMEOSTAT_API_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().positive().default(30),
    /**
     * OIDC issuers (comma-separated HTTPS URLs, as in their tokens' `iss`) whose JWTs are verified
     * locally and then reviewed, besides the cluster's ServiceAccount issuer. @default none
     */
    HOMEOSTAT_API_OIDC_ISSUERS: z
      .string()
      .default('')
      .transform((text, ctx) => {
        const issuers = text
          .split(',')
          .map((i) => i.trim())
          .filter(Boolean);
        for (const i of issuers) {
          if (!URL.canParse(i) || new URL(i).protocol !== 'https:') {
            ctx.addIssue({ code: 'custom', message: `not an HTTPS issuer URL: "${i}"` });
          }
        }
        return issuers;
      }),
    /**
     * `true` sends opaque (non-JWT) bearer tokens to TokenReview (a webhook token authenticator),
     * under the failure budget; otherwise they are refused without one. @default false
     */
    HOMEOSTAT_API_REVIEW_OPAQUE_TOKENS: z.enum(['true', 'false']).default('false'),
    /** Seconds an allowed SubjectAccessReview answer is reused (0: not cached). @default 30 */
    HOMEOSTAT_API_ACCESS_CACHE_ALLOWED_SECONDS: z.coerce.number().min(0).max(600).default(30),
    /** Seconds a denied SubjectAccessReview answer is reused (0: not cached). @default 5 */
    HOMEOSTAT_API_ACCESS_CACHE_DENIED_SECONDS: z.coerce.number().min(0).max(600).default(5),
    /**
     * Base64 key (32+ bytes) sealing list page tokens: the same on every replica, so a page token from
     * one is good on another. @default random per process
     */
    HOMEOSTAT_API_PAGE_TOKEN_KEY: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined || text === '') return undefined;
        const key = Buffer.from(text, 'base64');
        if (key.length < 32) {
          ctx.addIssue({ code: 'custom', message: 'must be at least 32 bytes, base64 (openssl rand -base64 32)' });
          return z.NEVER;
        }
        return key;
      }),
    /** Set by Kubernetes in every Pod: static tokens are refused there. */
    KUBERNETES_SERVICE_HOST: z.string().optional(),
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
    /**
     * Origins (comma-separated, or `*`) whose pages may call the codec endpoint, e.g. the Temporal UI's.
     * @default the origin of HOMEOSTAT_TEMPORAL_UI_URL
     */
    HOMEOSTAT_CODEC_ALLOWED_ORIGINS: z
      .string()
      .optional()
      .transform((text, ctx) => {
        const origins = (text ?? '')
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean);
        for (const o of origins) {
          if (o !== '*' && !URL.canParse(o)) ctx.addIssue({ code: 'custom', message: `not an origin: "${o}"` });
        }
        return origins.length > 0 ? origins : undefined;
      }),
    LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
  })
  .superRefine((c, ctx) => {
    const problem = (path: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [path], message });
    };
    if ((c.HOMEOSTAT_API_TLS_CERT_FILE === undefined) !== (c.HOMEOSTAT_API_TLS_KEY_FILE === undefined)) {
      problem(
        'HOMEOSTAT_API_TLS_KEY_FILE',
        'set both HOMEOSTAT_API_TLS_CERT_FILE and HOMEOSTAT_API_TLS_KEY_FILE, or neither',
      );
    }
    if (c.HOMEOSTAT_API_TLS_CERT_FILE === undefined && c.HOMEOSTAT_API_INSECURE_HTTP !== 'true') {
      problem(
        'HOMEOSTAT_API_TLS_CERT_FILE',
        'the API serves HTTPS: set HOMEOSTAT_API_TLS_CERT_FILE and HOMEOSTAT_API_TLS_KEY_FILE (or HOMEOSTAT_API_INSECURE_HTTP=true for local use)',
      );
    }
    if (c.HOMEOSTAT_API_STATIC_TOKENS.length > 0) {
      if (c.HOMEOSTAT_API_INSECURE_STATIC_TOKENS !== 'true') {
        problem(
          'HOMEOSTAT_API_STATIC_TOKENS',
          'static tokens bypass Kubernetes authentication: set HOMEOSTAT_API_INSECURE_STATIC_TOKENS=true to accept them (local use only)',
        );
      }
      if (c.KUBERNETES_SERVICE_HOST) {
        problem(
          'HOMEOSTAT_API_STATIC_TOKENS',
          'static tokens are refused inside a Kubernetes cluster (KUBERNETES_SERVICE_HOST is set)',
        );
      }
    }
  });

/** The parsed API configuration. */
export type ApiConfig = Readonly<z.output<typeof apiEnvSchema>>;

/** Parses the environment; on error prints every problem and exits with status 2. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ParsedEnv<ApiConfig> {
  return loadEnvOrExit('api', apiEnvSchema, env);
}
