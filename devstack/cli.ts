/**
 * `npm run devstack -- up|down|status|env|build [--name NAME] [--keep]`: the local control plane
 * from the command line. `up` builds what is missing (cached outside the repo), starts every server,
 * waits until each is ready and prints the endpoints; the stack keeps running until `down`.
 */
import { parseArgs } from 'node:util';
import { ensureBinaries } from './binaries';
import { cleanupStaleStacks, clusterByDefault, stackStatus, startStack, stopStack } from './stack';
import { defaultStackName } from './paths';
import { endpointsOf, shellExports } from './stack-state';

const usage = `usage: npm run devstack -- <up|down|status|env|build> [--name NAME] [--keep] [--no-cluster]
  up      build what is missing, start the stack, print its endpoints (the whole cluster: controllers,
          scheduler and simulated nodes, so Deployments get Pods; --no-cluster or
          HOMEOSTAT_DEVSTACK_CLUSTER=0: only etcd and kube-apiserver, as envtest)
  down    stop the stack and remove its data (--keep keeps the data)
  status  show whether each server runs
  env     print the stack's environment (eval "$(npm run -s devstack -- env)")
  build   only build (or find cached) the server binaries (--no-cluster: not the cluster's)`;

const log = (line: string): void => {
  process.stderr.write(`[devstack] ${line}\n`);
};

function printEndpoints(e: ReturnType<typeof endpointsOf>): void {
  const rows: [string, string][] = [
    ['Temporal gRPC', `${e.temporalAddress} (namespace ${e.temporalNamespace})`],
    ['Temporal UI', e.temporalUiUrl],
    ['kube-apiserver', e.kubeApiUrl],
    ['kubeconfig', e.kubeconfig],
    ['PostgreSQL', e.postgresUrl],
    ['etcd', e.etcdUrl],
    ['env file', e.envFile],
  ];
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(16)}${v}\n`);
  process.stdout.write(`\ntry: kubectl --kubeconfig ${e.kubeconfig} get namespaces\n`);
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    allowNegative: true,
    options: {
      name: { type: 'string' },
      keep: { type: 'boolean', default: false },
      cluster: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  const name = values.name ?? defaultStackName('stack');
  if (values.help || !command) {
    process.stdout.write(`${usage}\n`);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case 'build': {
      const paths = await ensureBinaries(log, {
        cluster: values.cluster ?? clusterByDefault(),
      });
      for (const [k, v] of Object.entries(paths)) process.stdout.write(`${k.padEnd(24)}${v}\n`);
      return 0;
    }
    case 'up': {
      const cleaned = await cleanupStaleStacks();
      if (cleaned.length) log(`removed stale stacks: ${cleaned.join(', ')}`);
      const started = Date.now();
      const stack = await startStack({
        name,
        detached: true,
        progress: log,
        ...(values.cluster === undefined ? {} : { cluster: values.cluster }),
      });
      log(`stack ${name} ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      printEndpoints(stack.endpoints);
      return 0;
    }
    case 'down': {
      const stopped = await stopStack(name, { keepData: values.keep ?? false });
      log(stopped ? `stack ${name} stopped${values.keep ? ' (data kept)' : ''}` : `no stack named ${name}`);
      const cleaned = await cleanupStaleStacks();
      if (cleaned.length) log(`removed stale stacks: ${cleaned.join(', ')}`);
      return 0;
    }
    case 'status': {
      const status = stackStatus(name);
      if (!status) {
        process.stdout.write(`no stack named ${name}\n`);
        return 1;
      }
      const clusterOnly = new Set(['kube-controller-manager', 'kube-scheduler', 'kwok']);
      for (const [k, v] of Object.entries(status.running)) {
        if (clusterOnly.has(k) && !status.state.cluster) continue; // not part of this stack
        process.stdout.write(`${k.padEnd(24)}${v ? 'running' : 'stopped'}\n`);
      }
      process.stdout.write('\n');
      printEndpoints(endpointsOf(status.state));
      return Object.values(status.running).every(Boolean) ? 0 : 1;
    }
    case 'env': {
      const status = stackStatus(name);
      if (!status) {
        process.stderr.write(`no stack named ${name}\n`);
        return 1;
      }
      for (const line of shellExports(endpointsOf(status.state))) process.stdout.write(`${line}\n`);
      return 0;
    }
    default:
      process.stderr.write(`unknown command ${command}\n${usage}\n`);
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[devstack] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
