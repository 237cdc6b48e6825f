/**
 * The `App` plan (plain data, bundled into workflow code): a ConfigMap, then the Deployment that
 * mounts it (rolled when the config changes), and a Service, independent of both. Children are
 * owned by the App; the informer bridge maps their changes back to it, so a deleted or hand-edited
 * child is put back. Every step is a Kubernetes apply: short and idempotent, so local.
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
    // Its status too: a rollout's progress re-reconciles the App (Reconciling → Ready or Degraded).
    { apiVersion: 'apps/v1', kind: 'Deployment', statusChanges: true },
    { apiVersion: 'v1', kind: 'Service' },
  ],
  steps: [
    { name: 'config', summary: 'apply the ConfigMap', startToCloseTimeout: '30 seconds', execution: 'local' },
    {
      name: 'deployment',
      dependsOn: ['config'],
      summary: 'apply the Deployment',
      startToCloseTimeout: '30 seconds',
      execution: 'local',
    },
    { name: 'service', summary: 'apply the Service', startToCloseTimeout: '30 seconds', execution: 'local' },
  ],
  // Children are watched, so a hand-edited or deleted child is put back by its event within seconds;
  // the drift check is only the safety net for a missed event. 30 minutes: 1,440 checks a month at 2
  // actions each ($0.14 per idle App at $50 per million); an App may ask for less or more with the
  // homeostat.dev/drift-check-interval annotation (30 s to 24 h).
  driftCheckInterval: '30 minutes',
});
