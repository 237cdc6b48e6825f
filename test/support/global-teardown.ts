/** Jest global teardown: stops the run's stack (jest calls it when tests failed too). */
import type { Stack } from '../../devstack';

export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __homeostatStack?: Stack }).__homeostatStack;
  if (!stack) return;
  await stack.stop({ keepData: process.env.HOMEOSTAT_KEEP_STACK === '1' });
}
