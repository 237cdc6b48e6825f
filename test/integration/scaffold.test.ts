/**
 * Acceptance of homeostat as a framework (issue 12): the package as a team gets it. `npm pack` makes
 * the tarball (its `prepack` builds and bundles); `homeostat init` scaffolds a project into a folder
 * outside the repository that depends on that tarball; `npm install` installs it from the local npm
 * cache; the project type-checks, lints and builds; its own tests (`npm test`: node's test runner with
 * `homeostat/testing`) pass on a real local stack of their own — a Tenant reconciled to Ready, its
 * children present, a deleted RoleBinding put back, its children garbage-collected after it, a reconcile through the HTTP
 * API, its workflows found by kind in Temporal visibility — and its demo (`npm run demo`) brings the
 * example Tenant to Ready. The Go servers come from the shared binary cache (built once by this
 * repository's runs). Each phase's duration is printed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rewriteImports } from '../../cli/init';
import { randomSuffix } from '../support/harness';

const repo = join(__dirname, '../..');
const walkthrough = join(__dirname, '../fixtures/walkthrough');

interface Run {
  readonly code: number | null;
  /** stdout and stderr, interleaved. */
  readonly output: string;
  readonly stdout: string;
  readonly seconds: number;
}

/**
 * The environment of the project's commands: this one without npm's per-script variables (a run
 * started by `npm test` would pass its own prefix and config to the project's npm) and without the
 * test run's stack name, so the project's tests start a stack of their own, as they do for a user.
 */
function projectEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'HOMEOSTAT_TEST_STACK' && k !== 'INIT_CWD'),
  );
  return { ...env, NODE_ENV: 'test', CI: 'true' };
}

const timings: [string, number][] = [];

/** Runs a command to its end, keeping its output (stdout and stderr interleaved) and how long it took. */
function run(what: string, command: string, args: string[], cwd: string, timeoutMs = 600_000): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: projectEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      timings.push([what, seconds]);
      process.stderr.write(`[scaffold acceptance] ${what}: ${seconds.toFixed(1)}s (exit ${code})\n`);
      resolve({ code, output, stdout, seconds });
    });
  });
}

/** Expects a run to have succeeded; shows the end of its output when it did not. */
function expectSuccess(what: string, result: Run): void {
  expect({ what, code: result.code, output: result.code === 0 ? '' : result.output.slice(-6000) }).toEqual({
    what,
    code: 0,
    output: '',
  });
}

describe('homeostat as an installed package (npm pack → homeostat init → npm install → the project’s own tests)', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'homeostat-acceptance-'));
  });
  afterAll(() => {
    process.stderr.write(
      `[scaffold acceptance] ${timings.map(([w, s]) => `${w} ${s.toFixed(1)}s`).join(' · ')} · total ${timings
        .reduce((sum, [, s]) => sum + s, 0)
        .toFixed(1)}s\n`,
    );
    rmSync(work, { recursive: true, force: true });
  });

  it('given the packed tarball, a scaffolded Tenant project installs, type-checks, lints, builds, passes its own tests on the real stack and runs its demo', async () => {
    // 1. The tarball: what `npm pack` ships (prepack builds dist/ and the workflow bundle).
    const pack = await run('npm pack', 'npm', ['pack', '--json', '--pack-destination', work], repo);
    expectSuccess('npm pack', pack);
    const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const shipped = packed!.files.map((f) => f.path);
    expect(shipped).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/cli/homeostat.js',
        'dist/reconcilers/index.d.ts',
        'dist/runtime/index.d.ts',
        'dist/testing/index.d.ts',
        'dist/builtin/index.d.ts',
        'dist/workflow-bundle.js',
        'devstack/go/kube-apiserver/go.mod',
        'devstack/go/kube-apiserver/go.sum',
        'templates/tenant-operator/src/tenant.ts',
      ]),
    );
    // Sources of homeostat's Go wrappers only, never binaries; no tests, scripts or source maps.
    expect(shipped.filter((p) => p.startsWith('devstack/go/') && !/\/go\.(mod|sum)$|\.go$/.test(p))).toEqual([]);
    expect(shipped.filter((p) => /^(test|bench|scripts|dist\/scripts)\/|\.map$/.test(p))).toEqual([]);
    const tarball = join(work, packed!.filename);

    // 2. The scaffold, outside the repository, depending on the tarball.
    const project = join(work, 'platform-tenants');
    const init = await run(
      'homeostat init',
      process.execPath,
      [join(repo, 'dist/cli/homeostat.js'), 'init', project, '--homeostat', tarball],
      work,
    );
    expectSuccess('homeostat init', init);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies.homeostat).toBe(`file:${tarball}`);

    // 2b. The walk-through of issue 29: a second kind added as a newcomer would (test/fixtures/walkthrough):
    // a StaticSite whose Deployment must roll out, a regular step calling a local HTTP endpoint that
    // fails twice, and a cleanup step; the operator serves both kinds.
    for (const file of ['static-site.ts', 'static-site.test.ts', 'operator.ts']) {
      const source = readFileSync(join(walkthrough, file), 'utf8');
      writeFileSync(join(project, 'src', file), rewriteImports(source, file));
    }

    // 3. Installed from the local npm cache, then checked and built as its own scripts do.
    const install = await run(
      'npm install',
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
      project,
    );
    expectSuccess('npm install', install);
    expectSuccess(
      'tsc --noEmit',
      await run('tsc --noEmit', 'npx', ['--no-install', 'tsc', '-p', '.', '--noEmit'], project),
    );
    expectSuccess('npm run lint', await run('npm run lint', 'npm', ['run', '-s', 'lint'], project));
    expectSuccess('npm run build', await run('npm run build', 'npm', ['run', '-s', 'build'], project));

    // The project's `npm run crds` (homeostat crds --out-dir) writes one file per kind, the new one
    // included, and a kustomization listing both; --check then finds them current.
    expectSuccess('npm run crds', await run('npm run crds', 'npm', ['run', '-s', 'crds', '--ignore-scripts'], project));
    expect(readFileSync(join(project, 'deploy/crds/kustomization.yaml'), 'utf8')).toBe(
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n' +
        '  - tenants.platform.example.com.yaml\n  - staticsites.sites.example.com.yaml\n',
    );
    expect(readFileSync(join(project, 'deploy/crds/staticsites.sites.example.com.yaml'), 'utf8')).toContain(
      'description: How many nginx Pods serve the page.',
    );
    const crds = await run(
      'npm run crds -- --check',
      'npm',
      ['run', '-s', 'crds', '--ignore-scripts', '--', '--check'],
      project,
    );
    expectSuccess('npm run crds -- --check', crds);

    // 4. The project's own tests (already built: its pretest build is skipped), on a stack of their own.
    const tests = await run('npm test', 'npm', ['test', '--ignore-scripts'], project, 900_000);
    expectSuccess('npm test', tests);
    for (const name of [
      'given a Tenant, it becomes Ready with its Namespace, quota, limits, RoleBinding and NetworkPolicy',
      'given its RoleBinding deleted, homeostat puts it back',
      'given a reconcile through the HTTP API, it answers with the outcome of the pass',
      'given Tenants, their workflows are found by kind in Temporal visibility',
      'given a Tenant deleted, the garbage collector deletes its Namespace and everything in it',
      'given a StaticSite, it is Ready once its Deployment rolled out and its announcement got through the failures',
    ]) {
      // node:test's TAP reporter (`ok 3 - …`, Node 20 without a terminal) or its spec reporter (`✔ …`, Node 24).
      expect(tests.output).toMatch(new RegExp(`(ok \\d+ - |✔ )${name.replace(/[()]/g, '\\$&')}`));
    }
    expect(tests.output).toMatch(/(# |ℹ )fail 0/);
    expect(tests.output).toMatch(/(# |ℹ )pass [1-9]/);

    // 5. The README's other command: the demo, stopped once the example Tenant is Ready.
    const demo = await run(
      'npm run demo',
      'npm',
      ['run', 'demo', '--ignore-scripts', '--', '--exit-when-ready', '--stack-name', `scaffold-${randomSuffix()}`],
      project,
    );
    expectSuccess('npm run demo', demo);
    expect(demo.output).toMatch(/tenants\/pony-ranch\s+Ready — All 5 steps succeeded/);
    expect(demo.output).toMatch(
      /Temporal UI\s+http:\/\/127\.0\.0\.1:\d+\/namespaces\/homeostat\/workflows\?query=HomeostatKind/,
    );
    // In a project the CLI is the installed package's: the environment comes from `npx homeostat env`.
    expect(demo.output).toMatch(/eval "\$\(npx homeostat env --stack-name scaffold-\S+\)"/);
  }, 1_800_000);
});
