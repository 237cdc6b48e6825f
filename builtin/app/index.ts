/** `App`: a ConfigMap, Deployment and Service kept in line with the spec (self-healing children). */

export { appReconciler, configHash, configMapName } from './reconciler';
export { appPlan } from './plan';
export { appSpec, type AppSpec } from './schema';
