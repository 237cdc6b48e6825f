/**
 * Jest global setup of the integration project: one real stack per test run. Stacks left by a killed
 * earlier run are cleaned first. The stack's name reaches the test workers through the environment.
 */
import { cleanupStaleStacks, startStack } from '../../devstack';

export default async function globalSetup(): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`[devstack] ${line}\n`);
  };
  const cleaned = await cleanupStaleStacks();
  if (cleaned.length) log(`removed stale stacks of killed runs: ${cleaned.join(', ')}`);
  const name = `test-${process.pid}`;
  const started = Date.now();
  const stack = await startStack({ name, progress: log });
  log(`stack ${name} ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  process.env.HOMEOSTAT_TEST_STACK = name;
  (globalThis as { __homeostatStack?: typeof stack }).__homeostatStack = stack;
}
