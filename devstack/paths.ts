import { existsSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * The root of the homeostat package containing `from`: the nearest folder above it whose
 * `package.json` is named `homeostat`. That is the repository in a checkout (sources run by tsx or
 * jest, and the compiled `dist/`), and `node_modules/homeostat` once the package is installed — so
 * `devstack/go/` is found from sources and from compiled code alike. Throws when there is none.
 */
export function findPackageRoot(from: string): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'homeostat') return dir;
      } catch {
        // An unreadable package.json on the way up is not ours; keep walking.
      }
    }
    if (dirname(dir) === dir) throw new Error(`no package.json named homeostat above ${from}`);
  }
}

/** Root of the homeostat package (the repository in a checkout, `node_modules/homeostat` when installed). */
export const packageRoot = findPackageRoot(__dirname);

/** The same folder as {@link packageRoot}, under the name the repository's scripts use. */
export const repoRoot = packageRoot;

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
