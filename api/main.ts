/**
 * The API process, `homeostat api`: configuration from the environment (see `config.ts`), the kinds it
 * serves from the operator; SIGTERM closes the server gracefully.
 */
import type { Operator } from '../core/operator';
import { startTracing } from '../config';
import { loadApiConfig } from './config';
import { startApiComponent } from './run-api';

/** Runs the API process for an operator until SIGTERM/SIGINT. */
export async function apiMain(operator: Operator): Promise<void> {
  const parsed = loadApiConfig();
  await startTracing(parsed.tracing, 'homeostat-api');
  const running = await startApiComponent({ ...parsed, operator }).catch((err: unknown) => {
    process.stderr.write(`api failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
  const stop = (): void => {
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
