import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  binaryPath,
  cacheDir,
  defaultStackName,
  envLines,
  goServers,
  stackDir,
  stacksRoot,
  endpointsOf,
  type StackState,
} from '../../devstack';
import { freePorts, isListening, isRunning } from '../../devstack/processes';
import { readState, saveState } from '../../devstack/stack-state';

describe('devstack paths and endpoints', () => {
  it('given no settings, it caches binaries under ~/.cache/homeostat and keeps stacks under the temp folder', () => {
    expect(cacheDir({ HOME: '/home/x' })).toMatch(/\.cache\/homeostat$/);
    expect(cacheDir({ HOMEOSTAT_CACHE_DIR: '/c' })).toBe('/c');
    expect(cacheDir({ XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/homeostat');
    expect(stacksRoot({})).toBe(join(tmpdir(), `homeostat-devstack-${process.getuid?.() ?? 0}`));
    expect(stackDir('demo', { HOMEOSTAT_DEVSTACK_DIR: '/s' })).toBe('/s/demo');
  });

  it('given two project folders, each gets a stack name of its own, the same every time, valid as a stack name', () => {
    const a = mkdtempSync(join(tmpdir(), 'Project A-'));
    const b = mkdtempSync(join(tmpdir(), 'project-b-'));
    const nameA = defaultStackName('demo', a);
    expect(nameA).toMatch(/^demo-project-a-[a-z0-9]+-[0-9a-f]{8}$/);
    expect(defaultStackName('demo', a)).toBe(nameA);
    expect(defaultStackName('demo', b)).not.toBe(nameA);
    expect(() => stackDir(nameA)).not.toThrow();
    expect(() => stackDir(defaultStackName('demo', '/'))).not.toThrow();
  });

  it('given a stack name with a path in it, it refuses it', () => {
    expect(() => stackDir('../etc')).toThrow(/invalid stack name/);
    expect(() => stackDir('')).toThrow(/invalid stack name/);
  });

  it('given the pinned servers, each binary is keyed by version and by its wrapper module hash', () => {
    const paths = goServers.map((s) => binaryPath(s, { HOMEOSTAT_CACHE_DIR: '/cache' }));
    expect(new Set(paths).size).toBe(goServers.length);
    for (const [i, server] of goServers.entries()) {
      expect(paths[i]).toMatch(new RegExp(`^/cache/bin/${server.name}/${server.version}-[0-9a-f]{12}/${server.name}$`));
    }
  });

  it('given a stack state, the env file names every endpoint', () => {
    const state = {
      name: 'x',
      dir: '/tmp/s/x',
      ports: {
        temporal: 1,
        temporalHttp: 2,
        temporalUi: 3,
        temporalMetrics: 4,
        etcdClient: 5,
        etcdPeer: 6,
        kube: 7,
        postgres: 8,
      },
      postgresPassword: 'p w',
    } as StackState;
    expect(envLines(endpointsOf(state))).toEqual([
      'TEMPORAL_ADDRESS=127.0.0.1:1',
      'TEMPORAL_NAMESPACE=homeostat',
      'HOMEOSTAT_TEMPORAL_UI_URL=http://127.0.0.1:3',
      'KUBECONFIG=/tmp/s/x/kubeconfig',
      'HOMEOSTAT_KUBE_API_URL=https://127.0.0.1:7',
      'HOMEOSTAT_ETCD_URL=http://127.0.0.1:5',
      'HOMEOSTAT_POSTGRES_URL=postgres://postgres:p%20w@127.0.0.1:8/postgres',
    ]);
  });
});

describe('devstack processes', () => {
  it('given free ports, they are distinct and nothing listens on them', async () => {
    const ports = await freePorts(8);
    expect(new Set(ports).size).toBe(8);
    for (const p of ports) expect(await isListening(p)).toBe(false);
  });

  it('given a PID reused by another program, the recorded process is not taken as running', () => {
    expect(isRunning({ pid: process.pid, executable: process.execPath })).toBe(true);
    expect(isRunning({ pid: process.pid, executable: join(mkdtempSync(join(tmpdir(), 'x')), 'etcd') })).toBe(false);
    expect(isRunning({ pid: 2 ** 22 + 1, executable: process.execPath })).toBe(false);
  });
});

describe('devstack state file', () => {
  it('given a reader holding the state file open, saving a new state replaces the file whole, never rewriting it in place', () => {
    const name = `state-${process.pid}-${Date.now().toString(36)}`;
    const dir = stackDir(name);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'state.json');
    const first = { name, dir, ownerPid: 1, processes: {} } as unknown as StackState;
    try {
      saveState(first);
      const fd = openSync(file, 'r');
      try {
        saveState({ ...first, ownerPid: 2 });
        // A reader that opened the file before the save still reads the first state, whole: the new
        // one went to a file of its own, renamed over it (a write in place would show the reader the
        // new bytes, or none while the file is truncated for the write).
        expect((JSON.parse(readFileSync(fd, 'utf8')) as StackState).ownerPid).toBe(1);
      } finally {
        closeSync(fd);
      }
      expect(readState(name)?.ownerPid).toBe(2);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['state.json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
