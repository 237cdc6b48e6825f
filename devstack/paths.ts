import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

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

/** The user this process runs as, for folder names that must not be shared between users. */
const currentUid = (): number => process.getuid?.() ?? 0;

/**
 * Where stacks keep their data and state: one folder per user under the system temp folder, private
 * to that user (mode 0700), so another user of the machine can neither read a stack's files nor take
 * its folder first.
 * @default `$HOMEOSTAT_DEVSTACK_DIR`, else `<tmpdir>/homeostat-devstack-<uid>`
 */
export function stacksRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOMEOSTAT_DEVSTACK_DIR) return resolve(env.HOMEOSTAT_DEVSTACK_DIR);
  return join(tmpdir(), `homeostat-devstack-${currentUid()}`);
}

/**
 * Creates `dir` (and missing parents) and makes it private: mode 0700, owned by this user. A folder
 * that is a symbolic link or belongs to another user is refused, not trusted: someone who made it
 * first could read or replace what the stack writes there.
 */
export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== currentUid()) {
    throw new Error(
      `${dir} is not a folder of this user (uid ${currentUid()}): remove it or set HOMEOSTAT_DEVSTACK_DIR`,
    );
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

/**
 * The local stack name a project uses unless told otherwise: `<prefix>-<folder>-<hash>`, where the
 * hash is of the user and the project's folder (the nearest folder with a `package.json` at or above
 * `cwd`). Two projects — or two users — on one machine so never share a stack; the same project finds
 * its own stack again.
 */
export function defaultStackName(prefix: string, cwd: string = process.cwd()): string {
  let project = resolve(cwd);
  for (let dir = project; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      project = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  const hash = createHash('sha256').update(`${currentUid()}:${project}`).digest('hex').slice(0, 8);
  const folder = basename(project)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 24);
  return [prefix, folder, hash].filter(Boolean).join('-');
}

/** The folder of one named stack. */
export function stackDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(name)) {
    throw new Error(`invalid stack name ${JSON.stringify(name)}: use lowercase letters, digits, '.', '_' and '-'`);
  }
  return join(stacksRoot(env), name);
}
