/**
 * The `App` plan (plain data, bundled into workflow code): a ConfigMap, then the Deployment that
 * mounts it (rolled when the config changes), and a Service, independent of both. Children are
 * owned by the App; the informer bridge maps their changes back to it, so a deleted or hand-edited
 * child is put back.
 */
import { definePlan } from '../../reconcilers';

/** The plan of `App` (`homeostat.dev/v1alpha1`). */
export const appPlan = definePlan({
  group: 'homeostat.dev',
  version: 'v1alpha1',
  kind: 'App',
  plural: 'apps',
  scope: 'Namespaced',
  owns: [
    { apiVersion: 'v1', kind: 'ConfigMap' },
    { apiVersion: 'apps/v1', kind: 'Deployment' },
    { apiVersion: 'v1', kind: 'Service' },
  ],
  steps: [
    { name: 'config', summary: 'apply the ConfigMap', startToCloseTimeout: '30 seconds' },
    { name: 'deployment', dependsOn: ['config'], summary: 'apply the Deployment', startToCloseTimeout: '30 seconds' },
    { name: 'service', summary: 'apply the Service', startToCloseTimeout: '30 seconds' },
  ],
  driftCheckInterval: '5 minutes',
});
