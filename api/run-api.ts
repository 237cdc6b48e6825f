/**
 * The HTTP API as a process component: the Temporal client, Kubernetes authentication and the
 * Fastify server. Used by `homeostat api` and `homeostat all`.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { loadKubeConfig, type TemporalSettings } from '../config';
import type { Operator } from '../core/operator';
import { KubernetesAuth } from './auth';
import type { ApiConfig } from './config';
import { apiKindsOf, buildApiServer } from './server';

/** A running API component. */
export interface RunningApi {
  /** The listening address, e.g. `http://127.0.0.1:8080`. */
  readonly address: string;
  /** Closes the server (in-flight requests finish) and the Temporal connection. */
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
    redact: {
      paths: ['req.headers.authorization', '*.token', '*.password', 'token', 'password'],
      censor: '[redacted]',
    },
  });
  const kc = loadKubeConfig(config.KUBECONFIG);
  const connection = await Connection.connect(temporal.connectionOptions);
  const client = new Client({ connection, namespace: temporal.namespace });
  const app = await buildApiServer({
    temporal: client,
    kc,
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    ...apiKindsOf(options.operator),
    auth: new KubernetesAuth({ kc, staticTokens: config.HOMEOSTAT_API_STATIC_TOKENS }),
    log,
    taskQueue: config.HOMEOSTAT_TASK_QUEUE,
    rateLimitPerMinute: config.HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE,
    reconcileWaitMs: config.HOMEOSTAT_API_RECONCILE_WAIT_SECONDS * 1000,
    ...(config.HOMEOSTAT_TEMPORAL_UI_URL ? { temporalUiUrl: config.HOMEOSTAT_TEMPORAL_UI_URL } : {}),
  });
  const address = await app.listen({ port: config.HOMEOSTAT_API_PORT, host: config.HOMEOSTAT_API_HOST });
  log.info({ address }, 'api listening');
  return {
    address,
    async stop() {
      await app.close();
      await connection.close();
    },
  };
}
