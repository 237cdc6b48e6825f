/**
 * The API process: `homeostat api` (or `tsx api/main.ts`). Configuration comes from the environment
 * (see `config.ts`); SIGTERM closes the server gracefully.
 */
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { builtinPlans } from '../reconcilers/builtin-plans';
import { KubernetesAuth } from './auth';
import { loadApiConfig } from './config';
import { buildApiServer } from './server';

async function main(): Promise<void> {
  const config = loadApiConfig();
  const log = pino({
    name: 'homeostat-api',
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers.authorization', '*.token', '*.password', 'token', 'password'],
      censor: '[redacted]',
    },
  });
  const kc = new k8s.KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromDefault();
  const connection = await Connection.connect({
    address: config.TEMPORAL_ADDRESS,
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY, tls: true } : {}),
  });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const app = await buildApiServer({
    temporal,
    kc,
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    plans: builtinPlans,
    auth: new KubernetesAuth({ kc, staticTokens: config.HOMEOSTAT_API_STATIC_TOKENS }),
    log,
    taskQueue: config.HOMEOSTAT_TASK_QUEUE,
    rateLimitPerMinute: config.HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE,
    reconcileWaitMs: config.HOMEOSTAT_API_RECONCILE_WAIT_SECONDS * 1000,
    ...(config.HOMEOSTAT_TEMPORAL_UI_URL ? { temporalUiUrl: config.HOMEOSTAT_TEMPORAL_UI_URL } : {}),
  });
  const address = await app.listen({ port: config.HOMEOSTAT_API_PORT, host: config.HOMEOSTAT_API_HOST });
  log.info({ address }, 'api listening');
  const stop = (signal: string): void => {
    log.info({ signal }, 'api shutting down');
    void app
      .close()
      .then(() => connection.close())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`api failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
