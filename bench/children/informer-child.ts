/**
 * Memory scenario child: a bare `@kubernetes/client-node` informer (`makeInformer`) over the same
 * namespace. Reports its memory before starting and once every object is cached.
 */
import * as k8s from '@kubernetes/client-node';
import { benchPlan } from '../reconciler/plan';
import { childOptions, exitWithParent, measureMemory, report, until } from './measure';

interface Options {
  kubeconfig: string;
  namespace: string;
  expected: number;
}

async function main(): Promise<void> {
  const opts = childOptions<Options>();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const idle = await measureMemory();
  const informer = k8s.makeInformer<k8s.KubernetesObject>(
    kc,
    `/apis/${benchPlan.group}/${benchPlan.version}/namespaces/${opts.namespace}/${benchPlan.plural}`,
    () =>
      custom.listNamespacedCustomObject({
        group: benchPlan.group,
        version: benchPlan.version,
        plural: benchPlan.plural,
        namespace: opts.namespace,
      }) as Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>,
  );
  exitWithParent(() => informer.stop());
  await informer.start();
  const ok = await until(() => informer.list(opts.namespace).length >= opts.expected);
  const loaded = await measureMemory();
  report({ type: 'measured', ok, idle, loaded, cached: informer.list(opts.namespace).length });
}

main().catch((err: unknown) => {
  process.stderr.write(`informer child failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
