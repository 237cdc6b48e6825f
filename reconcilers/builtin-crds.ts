/** The CRDs of the built-in reconcilers, generated from their zod schemas (`npm run crds`). */
import { appCrdOptions, appPlan, appSpec } from './app';
import { customResourceDefinition } from './crd';
import { postgresDatabaseCrdOptions, postgresDatabasePlan, postgresDatabaseSpec } from './postgres-database';

/** Every built-in CRD, by file name under `deploy/crds/`. */
export function builtinCrds(): Record<string, Record<string, unknown>> {
  const crds = [
    customResourceDefinition(postgresDatabasePlan, postgresDatabaseSpec, postgresDatabaseCrdOptions),
    customResourceDefinition(appPlan, appSpec, appCrdOptions),
  ];
  return Object.fromEntries(crds.map((crd) => [`${(crd.metadata as { name: string }).name}.yaml`, crd]));
}
