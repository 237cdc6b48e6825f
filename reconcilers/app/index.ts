/** `App`: a ConfigMap, Deployment and Service kept in line with the spec (self-healing children). */
import type { CrdOptions } from '../crd';

export { appReconciler, configHash, configMapName } from './reconciler';
export { appPlan } from './plan';
export { appSpec, type AppSpec } from './schema';

/** CRD extras of `App`. */
export const appCrdOptions: CrdOptions = {
  shortNames: ['hsapp'],
  columns: [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
  ],
};
