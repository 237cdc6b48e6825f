/**
 * What `homeostat dev` tells its user to run to get the local stack's environment into a shell:
 * `homeostat env`, which works wherever the CLI runs (homeostat's repository, a project made by
 * `homeostat init`), and the Go version the README and the scaffold's README state, which must be the
 * one the servers' modules need.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaffold } from '../../cli/init';
import { goServers, goVersionNeeded, type StackState } from '../../devstack';

const cli = join(__dirname, '../../cli/homeostat.ts');
const repo = join(__dirname, '../..');
let root: string;

beforeEach(() => {
  // A path a shell must quote: a space and a single quote.
  root = mkdtempSync(join(tmpdir(), "homeostat dev-env 'x' "));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function homeostat(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    env: { ...process.env, HOMEOSTAT_DEVSTACK_DIR: root },
    encoding: 'utf8',
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe('homeostat env', () => {
  it('given a local stack, it prints exports that a shell evaluates to the stack’s endpoints', () => {
    const dir = join(root, 'demo');
    mkdirSync(dir, { recursive: true });
    const state: Omit<StackState, 'processes'> & { processes: object } = {
      name: 'demo',
      dir,
      createdAt: new Date(0).toISOString(),
      ownerPid: 1,
      detached: false,
      ports: {
        temporal: 7233,
        temporalHttp: 7243,
        temporalUi: 8233,
        temporalMetrics: 9090,
        etcdClient: 2379,
        etcdPeer: 2380,
        kube: 6443,
        postgres: 5432,
      },
      postgresPassword: "p'w",
      processes: {},
    };
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
    const printed = homeostat('env', '--stack-name', 'demo');
    expect(printed).toMatchObject({ status: 0 });
    const shell = spawnSync(
      'bash',
      ['-c', `eval "$HOMEOSTAT_EXPORTS" && printf '%s\\n' "$KUBECONFIG" "$TEMPORAL_ADDRESS" "$HOMEOSTAT_POSTGRES_URL"`],
      { env: { PATH: process.env.PATH, HOMEOSTAT_EXPORTS: printed.stdout }, encoding: 'utf8' },
    );
    expect(shell.stdout.split('\n').slice(0, 3)).toEqual([
      join(dir, 'kubeconfig'),
      '127.0.0.1:7233',
      "postgres://postgres:p'w@127.0.0.1:5432/postgres",
    ]);
  });

  it('given no such stack, it exits 1 naming it', () => {
    const res = homeostat('env', '--stack-name', 'nope');
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('no local stack named nope');
  });
});

describe('the Go version the documents state', () => {
  it('given the servers’ go.mod files, it is the highest go line among them', () => {
    const lines = goServers.map(
      (s) => /^go (\S+)$/m.exec(readFileSync(join(repo, 'devstack/go', s.name, 'go.mod'), 'utf8'))![1]!,
    );
    expect(goVersionNeeded()).toBe(lines.sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).at(-1));
  });

  it('given the README and a scaffolded project’s README, both name that version', async () => {
    const wanted = goVersionNeeded().replace(/\./g, '\\.');
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toMatch(new RegExp(`Go ${wanted}\\+`));
    const dir = join(root, 'tenants');
    await scaffold({ dir, log: () => {} });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toMatch(new RegExp(`Go ${wanted} or newer`));
  });
});
