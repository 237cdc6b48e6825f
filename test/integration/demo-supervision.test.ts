/**
 * The seed's story through `npm run demo` (`homeostat dev`, as a child process, no hand-started
 * process): the Sparkle Pony Ranch becomes Ready with its Pods running; its Deployment deleted comes
 * back, scaled by hand is scaled back; the demo's worker SIGKILLed right after a reconcile was triggered
 * is restarted by the demo (the progress view says so) and the App converges again; the namespace
 * deleted finishes (finalizers run, namespace gone). A signal then stops the demo quickly and quietly,
 * and no process of its stack is left running — Ctrl-C (SIGINT) here, SIGHUP and a doubled SIGTERM in
 * the other cases. No step waits on the machine's pace: each waits for what the demo prints or does.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { devProcessesPath, type DevProcesses } from '../../cli/dev-processes';
import { readState, stackDir } from '../../devstack';
import { sleep, waitFor } from '../support/bridge';
import { randomSuffix } from '../support/harness';
import { alive } from '../support/process';

const cli = join(__dirname, '../../cli/homeostat.ts');

interface Demo {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
  /** Resolves once the output contains `text` (fails if the demo exits first). */
  readonly printed: (text: string | RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
}

function startDemo(stackName: string): Demo {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'dev', '--stack-name', stackName], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const printed = (text: string | RegExp, timeoutMs = 240_000): Promise<RegExpMatchArray> =>
    waitFor(
      () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the demo exited:\n${out}`);
        return out.match(typeof text === 'string' ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : text);
      },
      timeoutMs,
      250,
      () => `${String(text)} in the demo's output:\n${out}`,
    );
  return { child, output: () => out, exited, printed };
}

/** Processes (other than this one) whose command line or environment names the stack's folder. */
function processesUsing(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    for (const file of ['cmdline', 'environ']) {
      try {
        const text = readFileSync(`/proc/${pid}/${file}`, 'utf8');
        if (text.includes(`${dir}/`)) {
          found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 200)}`);
          break;
        }
      } catch {
        // gone meanwhile
      }
    }
  }
  return found;
}

/** No stack trace, no error of a child: what a user sees after stopping the demo. */
function expectQuiet(out: string): void {
  expect(out.split('\n').filter((l) => /Error|^\s+at /.test(l))).toEqual([]);
}

/** Stops a demo a test left running (a failed expectation), and its stack. */
async function cleanUp(demo: Demo | undefined): Promise<void> {
  if (!demo || demo.child.exitCode !== null || demo.child.signalCode !== null) return;
  demo.child.kill('SIGINT');
  const exited = await Promise.race([demo.exited.then(() => true), sleep(30_000).then(() => false)]);
  if (!exited) demo.child.kill('SIGKILL');
}

describe('the seed’s story through the demo (homeostat dev supervising its processes)', () => {
  let demo: Demo | undefined;
  afterEach(async () => {
    await cleanUp(demo);
    demo = undefined;
  });

  it('given the ranch Ready, its Deployment deleted and scaled comes back, the killed worker is restarted with nothing lost, the namespace deletion finishes, and Ctrl-C stops everything quietly', async () => {
    const name = `demo-story-${randomSuffix()}`;
    const dir = stackDir(name);
    demo = startDemo(name);
    await demo.printed('press Ctrl-C');
    const out = demo.output();
    expect(out).toMatch(/pods of apps\/pony-spawner\s+3\/3 Running/);
    expect(out).toMatch(/apps\/pony-spawner\s+Ready/);

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(join(dir, 'kubeconfig'));
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const ns = 'pony-prod';
    const deployment = () =>
      apps.readNamespacedDeployment({ namespace: ns, name: 'pony-spawner' }).catch(() => undefined);
    const appPhase = async () =>
      (
        (await objects
          .read({
            apiVersion: 'homeostat.dev/v1alpha1',
            kind: 'App',
            metadata: { name: 'pony-spawner', namespace: ns },
          })
          .catch(() => undefined)) as { status?: { phase?: string } } | undefined
      )?.status?.phase;
    /** The Deployment back at 3 replicas, all ready, and the App Ready. */
    const converged = async (what: string, notUid?: string) => {
      const d = await waitFor(
        async () => {
          const d = await deployment();
          return (
            d &&
            d.metadata?.uid !== notUid &&
            d.spec?.replicas === 3 &&
            d.status?.readyReplicas === 3 &&
            (await appPhase()) === 'Ready' &&
            d
          );
        },
        90_000,
        500,
        () => `${what}\n${demo!.output()}`,
      );
      return d;
    };

    // Short names, as the README says: the CLI resolves pgdb against the demo's API.
    const [, api, token] = /API\s+(https:\/\/127\.0\.0\.1:\d+)\s+\(token (\S+)\)/.exec(out)!;
    const get = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', cli, 'get', 'pgdb', `${ns}/pony-spawner-db`, '--api', api!],
        { env: { ...process.env, HOMEOSTAT_API_TOKEN: token, HOMEOSTAT_API_CA_FILE: join(dir, 'pki', 'ca.crt') } },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    expect(get).toContain('PostgresDatabase pony-prod/pony-spawner-db: phase Ready');

    // The Deployment deleted: homeostat creates it again.
    const first = (await deployment())!;
    await apps.deleteNamespacedDeployment({ namespace: ns, name: 'pony-spawner' });
    await converged('the deleted Deployment back', first.metadata!.uid);

    // Scaled by hand: scaled back.
    const scaleToOne = () =>
      apps.patchNamespacedDeploymentScale(
        { namespace: ns, name: 'pony-spawner', body: { spec: { replicas: 1 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    // The patch's answer shows the scale taken; polling for 1 replica could miss it (homeostat may
    // already have put 3 back).
    expect((await scaleToOne()).spec?.replicas).toBe(1);
    await converged('the Deployment scaled back');

    // The worker SIGKILLed right after a reconcile was triggered: the demo restarts it and the pass
    // the bridge asked for still happens.
    const before = JSON.parse(readFileSync(devProcessesPath(dir), 'utf8')) as DevProcesses;
    const worker = before.children.worker!;
    await scaleToOne();
    process.kill(worker, 'SIGKILL');
    await demo.printed(/worker exited \(SIGKILL\); restart 1 in 0\.5s/, 10_000);
    const [, restartedPid] = await demo.printed(/worker restarted, restart 1 \(pid (\d+)\)/, 10_000);
    const after = JSON.parse(readFileSync(devProcessesPath(dir), 'utf8')) as DevProcesses;
    expect(after.children.worker).toBe(Number(restartedPid));
    expect(after.children.worker).not.toBe(worker);
    expect(after.children).toMatchObject({ bridge: before.children.bridge, api: before.children.api });
    await converged('the Deployment scaled back by the restarted worker');
    await demo.printed(/after the worker restart: 3 of 3 examples Ready .* 0 pending — no reconcile lost/, 30_000);

    // The namespace deleted: the databases' finalizers run (the App has none), and the namespace goes.
    await core.deleteNamespace({ name: ns });
    await waitFor(
      () =>
        core.readNamespace({ name: ns }).then(
          () => false,
          (err: { code?: number }) => err.code === 404,
        ),
      120_000,
      500,
      () => `namespace ${ns} gone\n${demo!.output()}`,
    );
    await demo.printed(/namespace\/pony-prod\s+gone/, 10_000);

    // Ctrl-C: a quick, quiet stop that leaves nothing running — quick meaning the worker, bridge and
    // API end on SIGTERM, none of them is SIGKILLed after its grace period.
    demo.child.kill('SIGINT');
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toMatch(/worker, bridge and API stopped in [\d.]+s\n/);
    expect(demo.output()).not.toMatch(/killed after/);
    expect(demo.output()).toContain('stopped');
    expectQuiet(demo.output());
    expect(processesUsing(dir)).toEqual([]);
    expect(Object.values(after.children).filter(alive)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  }, 420_000);

  it('given SIGHUP (the terminal closed) while it runs, it stops everything quietly', async () => {
    const name = `demo-hup-${randomSuffix()}`;
    const dir = stackDir(name);
    demo = startDemo(name);
    await demo.printed('press Ctrl-C');
    const { children } = JSON.parse(readFileSync(devProcessesPath(dir), 'utf8')) as DevProcesses;
    demo.child.kill('SIGHUP');
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain('stopped');
    expectQuiet(demo.output());
    expect(processesUsing(dir)).toEqual([]);
    expect(Object.values(children).filter(alive)).toEqual([]);
  }, 300_000);

  it('given SIGTERM while the stack starts and another a second later, it kills everything at once', async () => {
    const name = `demo-term-${randomSuffix()}`;
    const dir = stackDir(name);
    demo = startDemo(name);
    await demo.printed(/etcd ready/, 120_000);
    // etcd frozen: the start cannot finish (kube-apiserver cannot become ready), and a stop cannot either
    // (it waits for the start, then gives etcd its 10 s grace before SIGKILL) — so the demo is still
    // stopping when the second signal comes, however fast or slow the machine is.
    const etcd = readState(name)!.processes.etcd!.pid;
    process.kill(etcd, 'SIGSTOP');
    try {
      demo.child.kill('SIGTERM');
      // The demo notes the time of the first signal before it prints this line; a repeat within a second
      // of it is taken for the same request (npm forwards Ctrl-C), so the second comes well after.
      await demo.printed('stopping worker, bridge, API and the local stack…', 60_000);
      await sleep(1_200);
      demo.child.kill('SIGTERM');
      expect(await demo.exited).toBe(1);
    } finally {
      try {
        process.kill(etcd, 'SIGCONT');
      } catch {
        // killed with the rest
      }
    }
    expect(demo.output()).toMatch(/killing worker, bridge, API and the local stack now…\nkilled/);
    expectQuiet(demo.output());
    expect(processesUsing(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  }, 180_000);
});
