/**
 * Runs homeostat's CLI from its sources (`tsx cli/homeostat.ts …`) in a child process with a bare
 * environment (PATH, a throwaway HOME), as a user's shell would: its exit status and output.
 */
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = join(__dirname, '../../cli/homeostat.ts');

/** Runs `homeostat …args` and waits for it (at most a minute). */
export function homeostat(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir() },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
