import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Root of the repository (devstack/ lives directly under it). */
export const repoRoot = resolve(__dirname, '..');

/**
 * Where built server binaries are cached, outside the repository so that clones and CI runs on the
 * same machine share them.
 * @default `$HOMEOSTAT_CACHE_DIR`, else `$XDG_CACHE_HOME/homeostat`, else `~/.cache/homeostat`
 */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOMEOSTAT_CACHE_DIR) return resolve(env.HOMEOSTAT_CACHE_DIR);
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'homeostat');
  return join(homedir(), '.cache', 'homeostat');
}

/**
 * Where stacks keep their data and state. It is under the system temp folder because PostgreSQL
 * refuses to run as root and its own user must be able to create and write its data folder.
 * @default `$HOMEOSTAT_DEVSTACK_DIR`, else `<tmpdir>/homeostat-devstack`
 */
export function stacksRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOMEOSTAT_DEVSTACK_DIR) return resolve(env.HOMEOSTAT_DEVSTACK_DIR);
  return join(tmpdir(), 'homeostat-devstack');
}

/** The folder of one named stack. */
export function stackDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(name)) {
    throw new Error(`invalid stack name ${JSON.stringify(name)}: use lowercase letters, digits, '.', '_' and '-'`);
  }
  return join(stacksRoot(env), name);
}
