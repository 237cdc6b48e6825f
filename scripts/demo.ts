/**
 * The demo, the README's first command: the real local stack, homeostat's worker, informer bridge and
 * HTTP API as their own processes (the production entry points), the CRDs, and the Sparkle Pony Ranch examples reconciled to Ready with live
 * progress; then where to look, and everything keeps running until Ctrl-C, which stops it all.
 * `--exit-when-ready` stops right after the examples are Ready (used by tests and CI).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { bundleWorkflowCode } from '@temporalio/worker';
import { cacheDir, cleanupStaleStacks, repoRoot, startStack, stopStack } from '../devstack';
import { freePorts } from '../devstack/processes';

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
 * The prebuilt workflow bundle, cached by a hash of the code it is built from, so a second demo
 * starts its worker without webpack.
 */
async function workflowBundle(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [
    ...sourceFiles(join(repoRoot, 'workflows')),
    ...sourceFiles(join(repoRoot, 'reconcilers')),
  ].sort()) {
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
  plural: string;
  name: string;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'exit-when-ready': { type: 'boolean', default: false },
      'stack-name': { type: 'string', default: 'demo' },
    },
  });
  const stackName = values['stack-name'] ?? 'demo';
  const t0 = Date.now();
  await cleanupStaleStacks();
  await stopStack(stackName); // a demo left behind by a killed run
  say('starting the local stack (Temporal, etcd + kube-apiserver, PostgreSQL)…');
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
    kubectl('apply', '--server-side', '-k', join(repoRoot, 'deploy', 'crds'));
    kubectl('wait', '--for=condition=Established', 'crd/apps.homeostat.dev', 'crd/postgresdatabases.homeostat.dev');
    say('  CRDs installed (PostgresDatabase, App)');

    const [apiPort, workerPort, bridgePort] = (await freePorts(3)) as [number, number, number];
    const token = randomBytes(24).toString('base64url');
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
      // A token for this demo only, mapped to a cluster admin of the local stack.
      HOMEOSTAT_API_STATIC_TOKENS: `${token}=demo-admin:system:masters`,
      HOMEOSTAT_TEMPORAL_UI_URL: e.temporalUiUrl,
      LOG_LEVEL: 'warn',
    };
    for (const name of ['worker', 'bridge', 'api'] as const) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'cli', 'homeostat.ts'), name], {
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

    // The Sparkle Pony Ranch, with the server Secret pointing at the stack's PostgreSQL.
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(e.kubeconfig);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const examples = readdirSync(join(repoRoot, 'examples'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .flatMap((f) => k8s.loadAllYaml(readFileSync(join(repoRoot, 'examples', f), 'utf8')) as k8s.KubernetesObject[]);
    for (const obj of examples) {
      if (obj.kind === 'Secret' && obj.metadata?.name === 'ranch-postgres-admin') {
        (obj as k8s.V1Secret).stringData = { url: e.postgresUrl };
      }
      await objects.patch(obj, undefined, undefined, 'homeostat-demo', true, k8s.PatchStrategy.ServerSideApply);
    }
    say('  applied examples/ (namespace pony-prod, PostgresDatabase pony-spawner-db, App pony-spawner)\n');

    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const watched: Watched[] = [
      { plural: 'postgresdatabases', name: 'pony-spawner-db' },
      { plural: 'apps', name: 'pony-spawner' },
    ];
    const last = new Map<string, string>();
    const appliedAt = Date.now();
    for (;;) {
      let ready = 0;
      for (const w of watched) {
        const obj = (await custom
          .getNamespacedCustomObject({
            group: 'homeostat.dev',
            version: 'v1alpha1',
            namespace: 'pony-prod',
            plural: w.plural,
            name: w.name,
          })
          .catch(() => undefined)) as
          { status?: { phase?: string; conditions?: { type: string; message?: string }[] } } | undefined;
        const phase = obj?.status?.phase ?? 'Pending';
        const message = obj?.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
        const line = `${phase}${message ? ` — ${message}` : ''}`;
        if (last.get(w.name) !== line) {
          last.set(w.name, line);
          say(`  [${seconds(appliedAt).padStart(6)}] ${`${w.plural}/${w.name}`.padEnd(36)} ${line}`);
        }
        if (phase === 'Ready') ready += 1;
      }
      if (ready === watched.length) break;
      if (Date.now() - appliedAt > 180_000) throw new Error('the examples did not become Ready in 3 minutes');
      await sleep(300);
    }
    say(`\nthe Sparkle Pony Ranch is Ready (${seconds(appliedAt)} after apply, ${seconds(t0)} in all)\n`);
    say(kubectl('get', 'postgresdatabases,apps', '-n', 'pony-prod').trimEnd());
    say('\nwhere to look:');
    const query = encodeURIComponent(`HomeostatNamespace="pony-prod"`);
    say(`  Temporal UI    ${e.temporalUiUrl}/namespaces/${e.temporalNamespace}/workflows?query=${query}`);
    say(
      `  kubectl        kubectl --kubeconfig ${e.kubeconfig} get postgresdatabases,apps,deploy,svc,cm,secret -n pony-prod`,
    );
    say(`  PostgreSQL     ${e.postgresUrl}`);
    const api = `http://127.0.0.1:${apiPort}`;
    say(`  API            ${api}   (token ${token})`);
    say(
      `                 curl -H 'Authorization: Bearer ${token}' ${api}/v1/objects/homeostat.dev/v1alpha1/App/pony-prod/pony-spawner`,
    );
    say(`                 npx tsx cli/homeostat.ts reconcile App pony-prod/pony-spawner --api ${api} --token ${token}`);
    say(
      `  metrics        worker http://127.0.0.1:${workerPort}/metrics · bridge http://127.0.0.1:${bridgePort}/metrics · api ${api}/metrics`,
    );
    say(`  env file       ${e.envFile}   (eval "$(npm run -s devstack -- env --name ${stackName})")`);
    say('  try            kubectl … -n pony-prod scale deploy/pony-spawner --replicas=1   (homeostat puts 3 back)');
    if (values['exit-when-ready']) return stop(0);
    say('\nrunning; press Ctrl-C to stop everything');
    setInterval(() => {}, 1 << 30);
  } catch (err) {
    process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stop(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
