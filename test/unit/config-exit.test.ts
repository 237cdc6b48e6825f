/**
 * The exit path of each process's configuration loader, in process: on a bad environment the loader
 * prints `invalid <process> configuration:` and every problem to stderr, then exits with status 2.
 * process-config.test.ts checks the same by spawning the CLIs; this file lets mutation testing (issue 17)
 * see which process name each loader prints. `process.exit` is replaced by a throw so the test process
 * survives; stderr is captured, not silenced.
 */
import { loadApiConfig } from '../../api/config';
import { loadEnvOrExit } from '../../config';
import { loadBridgeConfig } from '../../informer-bridge/config';
import { loadWorkerConfig, workerEnvSchema } from '../../workers/config';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const home = { HOME: mkdtempSync(join(tmpdir(), 'homeostat-config-exit-')) };

class Exited extends Error {
  constructor(readonly code: string | number | null | undefined) {
    super(`process.exit(${String(code)})`);
  }
}

/** Runs a loader; returns what it wrote to stderr and the status it exited with. */
function exitOf(load: () => unknown): { code: unknown; stderr: string } {
  const written: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const exit = jest.spyOn(process, 'exit').mockImplementation((code) => {
    throw new Exited(code);
  });
  try {
    load();
  } catch (err) {
    if (err instanceof Exited) return { code: err.code, stderr: written.join('') };
    throw err;
  } finally {
    write.mockRestore();
    exit.mockRestore();
  }
  throw new Error(`the loader returned instead of exiting; stderr: ${written.join('')}`);
}

describe('configuration loaders on a bad environment', () => {
  it('given an invalid worker port, loadWorkerConfig prints the worker problem list and exits 2', () => {
    expect(exitOf(() => loadWorkerConfig({ ...home, HOMEOSTAT_WORKER_PORT: '70000' }))).toEqual({
      code: 2,
      stderr: expect.stringMatching(/^invalid worker configuration:\n {2}HOMEOSTAT_WORKER_PORT: .+\n$/),
    });
  });

  it('given an invalid API port, loadApiConfig prints the api problem list and exits 2', () => {
    expect(exitOf(() => loadApiConfig({ ...home, HOMEOSTAT_API_PORT: 'eighty' }))).toEqual({
      code: 2,
      stderr: expect.stringMatching(/^invalid api configuration:\n {2}HOMEOSTAT_API_PORT: .+\n$/),
    });
  });

  it('given an empty list of watched resources, loadBridgeConfig prints the informer-bridge problem list and exits 2', () => {
    const { code, stderr } = exitOf(() => loadBridgeConfig({ ...home, HOMEOSTAT_BRIDGE_RESOURCES: '[]' }));
    expect(code).toBe(2);
    expect(stderr).toMatch(/^invalid informer-bridge configuration:\n {2}HOMEOSTAT_BRIDGE_RESOURCES: /);
  });

  it('given several problems at once, loadEnvOrExit prints every one before exiting', () => {
    const { code, stderr } = exitOf(() =>
      loadEnvOrExit('x', workerEnvSchema, { ...home, HOMEOSTAT_WORKER_PORT: '-1', LOG_LEVEL: 'loud' }),
    );
    expect(code).toBe(2);
    expect(stderr.split('\n').filter((l) => l.startsWith('  '))).toEqual([
      expect.stringMatching(/^ {2}HOMEOSTAT_WORKER_PORT: /),
      expect.stringMatching(/^ {2}LOG_LEVEL: /),
    ]);
  });
});
