/**
 * The API process: `homeostat api` (or `node dist/api/main.js`). Configuration comes from the
 * environment (see `config.ts`); SIGTERM closes the server gracefully.
 */
import { loadApiConfig } from './config';
import { startApiComponent } from './run-api';

async function main(): Promise<void> {
  const running = await startApiComponent(loadApiConfig());
  const stop = (): void => {
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`api failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
