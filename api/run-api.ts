/**
 * The HTTP API as a process component: the Temporal client, Kubernetes authentication and the
 * Fastify server. Used by `homeostat api` and `homeostat all`.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Server } from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import {
  dataConverterOf,
  loadKubeConfig,
  traceContextClientInterceptor,
  traceLogFields,
  type TemporalSettings,
} from '../config';
import type { Operator } from '../core/operator';
import { KubernetesAuth } from './auth';
import type { ApiConfig } from './config';
import { fairnessSetting } from '../config/fairness-weights';
import { apiKindsOf } from './deps';
import { buildApiServer } from './server';

/** A running API component. */
export interface RunningApi {
  /** The listening address, e.g. `http://127.0.0.1:8080`. */
  readonly address: string;
  /** Closes the server (in-flight requests finish) and the Temporal connection; calling it again waits for the first call. */
  stop(): Promise<void>;
}

/** Starts the API on the configured host and port. */
export async function startApiComponent(options: {
  config: ApiConfig;
  temporal: TemporalSettings;
  /** The operator whose kinds the API serves. */
  operator: Operator;
}): Promise<RunningApi> {
  const { config, temporal } = options;
  const log = pino({
    name: 'homeostat-api',
    level: config.LOG_LEVEL,
    mixin: traceLogFields,
    redact: {
      paths: ['req.headers.authorization', '*.token', '*.password', 'token', 'password'],
      censor: '[redacted]',
    },
  });
  const kc = loadKubeConfig(config.KUBECONFIG);
  if (config.HOMEOSTAT_API_STATIC_TOKENS.length > 0) {
    log.warn(
      { users: config.HOMEOSTAT_API_STATIC_TOKENS.map((t) => t.user) },
      'INSECURE: static API tokens are accepted without Kubernetes authentication (HOMEOSTAT_API_INSECURE_STATIC_TOKENS); never do this outside a local machine',
    );
  }
  if (!config.HOMEOSTAT_API_TLS_CERT_FILE) {
    log.warn('INSECURE: the API serves plain HTTP (HOMEOSTAT_API_INSECURE_HTTP): bearer tokens travel in clear');
  }
  const tlsFiles =
    config.HOMEOSTAT_API_TLS_CERT_FILE && config.HOMEOSTAT_API_TLS_KEY_FILE
      ? { cert: config.HOMEOSTAT_API_TLS_CERT_FILE, key: config.HOMEOSTAT_API_TLS_KEY_FILE }
      : undefined;
  const readTls = (f: { cert: string; key: string }) => ({ cert: readFileSync(f.cert), key: readFileSync(f.key) });
  const connection = await Connection.connect(temporal.connectionOptions);
  const client = new Client({
    connection,
    namespace: temporal.namespace,
    ...dataConverterOf(temporal),
    // The active span's context (a delivery's, a request's) rides in the header of what it sends.
    interceptors: { workflow: [traceContextClientInterceptor] },
  });
  const app = await buildApiServer({
    temporal: client,
    kc,
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    ...apiKindsOf(options.operator),
    auth: new KubernetesAuth({
      kc,
      staticTokens: config.HOMEOSTAT_API_STATIC_TOKENS,
      audiences: config.HOMEOSTAT_API_AUDIENCES,
      oidcIssuers: config.HOMEOSTAT_API_OIDC_ISSUERS,
      reviewOpaqueTokens: config.HOMEOSTAT_API_REVIEW_OPAQUE_TOKENS === 'true',
      allowedCacheMs: config.HOMEOSTAT_API_ACCESS_CACHE_ALLOWED_SECONDS * 1000,
      deniedCacheMs: config.HOMEOSTAT_API_ACCESS_CACHE_DENIED_SECONDS * 1000,
      onKeysError: (issuer, err) =>
        log.warn(
          { issuer, err },
          'token issuer keys not fetched; its tokens go to TokenReview under the failure budget',
        ),
    }),
    authFailuresPerMinute: config.HOMEOSTAT_API_AUTH_FAILURES_PER_MINUTE,
    ...(config.HOMEOSTAT_API_PAGE_TOKEN_KEY ? { pageTokenKey: config.HOMEOSTAT_API_PAGE_TOKEN_KEY } : {}),
    ...(tlsFiles ? { https: readTls(tlsFiles) } : {}),
    log,
    taskQueue: config.HOMEOSTAT_TASK_QUEUE,
    fairnessWeights: fairnessSetting(config.HOMEOSTAT_FAIRNESS, config.HOMEOSTAT_FAIRNESS_WEIGHTS),
    rateLimitPerMinute: config.HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE,
    reconcileWaitMs: config.HOMEOSTAT_API_RECONCILE_WAIT_SECONDS * 1000,
    ...(config.HOMEOSTAT_TEMPORAL_UI_URL ? { temporalUiUrl: config.HOMEOSTAT_TEMPORAL_UI_URL } : {}),
    // The codec endpoint is served when payloads are encrypted, for the Temporal UI's origin.
    ...(temporal.payloadCodec
      ? {
          codec: {
            payloadCodec: temporal.payloadCodec,
            allowedOrigins:
              config.HOMEOSTAT_CODEC_ALLOWED_ORIGINS ??
              (config.HOMEOSTAT_TEMPORAL_UI_URL ? [new URL(config.HOMEOSTAT_TEMPORAL_UI_URL).origin] : []),
          },
        }
      : {}),
  });
  const address = await app.listen({ port: config.HOMEOSTAT_API_PORT, host: config.HOMEOSTAT_API_HOST });
  log.info({ address }, 'api listening');
  // A renewed certificate (cert-manager rewrites the mounted Secret) is served without a restart.
  const reload = (): void => {
    try {
      (app.server as Server).setSecureContext(readTls(tlsFiles!));
      log.info('TLS certificate reloaded');
    } catch (err) {
      log.error({ err }, 'TLS certificate not reloaded; the previous one is still served');
    }
  };
  if (tlsFiles) {
    watchFile(tlsFiles.cert, { interval: 30_000 }, reload);
    watchFile(tlsFiles.key, { interval: 30_000 }, reload);
  }
  let stopping: Promise<void> | undefined;
  return {
    address,
    stop() {
      // Once: a Ctrl-C reaches every process of the terminal's group, so the API may get SIGINT and
      // then its supervisor's SIGTERM; the second call waits for the first.
      stopping ??= (async () => {
        if (tlsFiles) {
          unwatchFile(tlsFiles.cert, reload);
          unwatchFile(tlsFiles.key, reload);
        }
        await app.close();
        await connection.close();
      })();
      return stopping;
    },
  };
}
