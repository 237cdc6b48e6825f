/**
 * The `App` reconciler: ConfigMap, Deployment and Service as owned children, applied by server-side
 * apply with homeostat's field manager and `force`, so a field changed by hand (say `kubectl scale`)
 * is taken back on the next pass. The Deployment's pod template carries a hash of the config, so a
 * config change rolls it. An App is `Ready` only when its Deployment has rolled out (every replica
 * updated, ready and available); until then it is `Reconciling` with the replicas' progress, and its
 * `status.readyReplicas` follows the Deployment's.
 */
import { createHash } from 'node:crypto';
import type { V1ConfigMap, V1Deployment, V1EnvVar, V1Service } from '@kubernetes/client-node';
import {
  childLabels,
  defineReconciler,
  HomeostatError,
  managedByValue,
  terminal,
  type CrdOptions,
  type ReferenceWatch,
  type StepContext,
} from '../../reconcilers';
import { imageRepositoryApproval } from './approvals';
import { appPlan } from './plan';
import { appSpec, databaseUrlEnv, type AppSpec } from './schema';

type Ctx = StepContext<AppSpec>;

const labels = (ctx: Ctx): Record<string, string> => ({
  'app.kubernetes.io/name': ctx.object.name,
  'app.kubernetes.io/instance': ctx.object.name,
  [childLabels.managedBy]: managedByValue,
});

const selector = (ctx: Ctx): Record<string, string> => ({
  'app.kubernetes.io/name': ctx.object.name,
  'app.kubernetes.io/instance': ctx.object.name,
});

/** The name of an App's ConfigMap. */
export const configMapName = (appName: string): string => `${appName}-config`;

/** A stable hash of the config data (sorted keys), put on the pod template to roll on change. */
export function configHash(config: Readonly<Record<string, string>>): string {
  const sorted = Object.keys(config)
    .sort()
    .map((k) => [k, config[k]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

/** The `PostgresDatabase` kind an App's `databaseRef` names. */
const postgresDatabaseKind = { apiVersion: 'homeostat.dev/v1alpha1', kind: 'PostgresDatabase' } as const;

/**
 * An App is reconciled again when the PostgresDatabase it names appears or changes (its connection
 * Secret's name may change with it).
 */
const databaseReference: ReferenceWatch = {
  ...postgresDatabaseKind,
  referencedBy: (object) => {
    const name = (object.spec as { databaseRef?: { name?: unknown } } | undefined)?.databaseRef?.name;
    return typeof name === 'string' && name !== '' ? [{ name }] : [];
  },
};

/**
 * The `DATABASE_URL` variable of an App naming a PostgresDatabase: a reference to the `url` key of the
 * database's connection Secret (`spec.connectionSecretName`, by default `<database>-connection`, as the
 * PostgresDatabase reconciler names it). A database that does not exist yet fails the step, which is
 * retried, and its creation re-reconciles the App.
 */
async function databaseEnv(ctx: Ctx): Promise<V1EnvVar[]> {
  const ref = ctx.spec.databaseRef;
  if (!ref) return [];
  const db = await ctx.read<{ apiVersion: string; kind: string; spec?: { connectionSecretName?: unknown } }>({
    ...postgresDatabaseKind,
    metadata: { name: ref.name },
  });
  if (!db) {
    throw new HomeostatError('ERR_STEP_FAILED', `PostgresDatabase ${ref.name} (databaseRef) does not exist yet`);
  }
  const named = db.spec?.connectionSecretName;
  const secret = typeof named === 'string' && named !== '' ? named : `${ref.name}-connection`;
  return [{ name: databaseUrlEnv, valueFrom: { secretKeyRef: { name: secret, key: 'url' } } }];
}

/** Where a Deployment's rollout stands: its ready replicas, and what is still to come (unset when complete). */
export interface Rollout {
  readonly ready: number;
  readonly progress?: string;
}

/**
 * The rollout of `deployment` towards `desired` replicas, as `kubectl rollout status` judges it:
 * complete when the Deployment's controller has observed the current generation and every desired
 * replica is updated, ready and available, with no old replica left.
 */
export function rolloutOf(deployment: V1Deployment, desired: number): Rollout {
  const status = deployment.status ?? {};
  const ready = status.readyReplicas ?? 0;
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  const progress = `${ready}/${desired} replicas ready`;
  if ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0)) {
    return { ready, progress: `${progress} (the new spec is not rolled out yet)` };
  }
  if (updated < desired) return { ready, progress: `${progress}, ${updated}/${desired} updated` };
  if (total > updated) return { ready, progress: `${progress}, ${total - updated} old replicas terminating` };
  if (ready < desired || available < desired) {
    return { ready, progress: available < ready ? `${progress}, ${available} available` : progress };
  }
  return { ready };
}

/** CRD extras of `App`. */
const appCrdOptions: CrdOptions = {
  shortNames: ['hsapp'],
  columns: [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready-Replicas', type: 'integer', jsonPath: '.status.readyReplicas' },
  ],
  status: {
    readyReplicas: { type: 'integer', description: "Ready Pods of the App's Deployment, as last seen" },
  },
};

/** The `App` reconciler. */
export const appReconciler = defineReconciler({
  crd: appCrdOptions,
  references: [databaseReference],
  plan: appPlan,
  schema: appSpec,
  // Every step writes only through ctx.children: a dry run runs them against dry-run children.
  steps: {
    config: {
      preview: 'children-only',
      async run(ctx) {
        await ctx.children.apply<V1ConfigMap>({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: configMapName(ctx.object.name), labels: labels(ctx) },
          data: ctx.spec.config,
        });
        return { message: `ConfigMap ${configMapName(ctx.object.name)}: ${Object.keys(ctx.spec.config).length} keys` };
      },
    },

    deployment: {
      preview: 'children-only',
      // Another image repository waits for an approver when the App asks for it (approvals.ts).
      approval: imageRepositoryApproval,
      async run(ctx) {
        const { image, replicas, port, env, config, progressDeadlineSeconds } = ctx.spec;
        const fromDatabase = await databaseEnv(ctx);
        const applied = await ctx.children.apply<V1Deployment>({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: ctx.object.name, labels: labels(ctx) },
          spec: {
            replicas,
            progressDeadlineSeconds,
            selector: { matchLabels: selector(ctx) },
            template: {
              metadata: { labels: labels(ctx), annotations: { 'homeostat.dev/config-hash': configHash(config) } },
              spec: {
                containers: [
                  {
                    name: 'app',
                    image,
                    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
                    env: [...env.map((e) => ({ name: e.name, value: e.value })), ...fromDatabase],
                    volumeMounts: [{ name: 'config', mountPath: '/etc/app', readOnly: true }],
                  },
                ],
                volumes: [{ name: 'config', configMap: { name: configMapName(ctx.object.name) } }],
              },
            },
          },
        });
        // A rollout past its deadline stays stuck until the spec changes: report the Deployment's own
        // reason and message rather than retrying (the bridge re-runs this step when the Deployment changes).
        const progressing = applied.status?.conditions?.find((c) => c.type === 'Progressing');
        const current = (applied.status?.observedGeneration ?? 0) >= (applied.metadata?.generation ?? 0);
        if (current && progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
          throw terminal(
            new Error(`Deployment ${ctx.object.name}: ${progressing.reason}: ${progressing.message ?? ''}`),
          );
        }
        const rollout = rolloutOf(applied, replicas);
        const database = fromDatabase.length ? `, ${databaseUrlEnv} from ${ctx.spec.databaseRef?.name}` : '';
        return {
          message: `Deployment ${ctx.object.name}: ${replicas} replicas of ${image} (${rollout.ready} ready)${database}`,
          status: { readyReplicas: rollout.ready },
          // Until the rollout is complete the App is Reconciling; the Deployment's status changes (its
          // kind is owned with statusChanges) bring the passes that follow it, so nothing polls.
          ...(rollout.progress !== undefined ? { progressing: rollout.progress } : {}),
        };
      },
    },

    service: {
      preview: 'children-only',
      async run(ctx) {
        await ctx.children.apply<V1Service>({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: ctx.object.name, labels: labels(ctx) },
          spec: {
            selector: selector(ctx),
            ports: [{ name: 'http', port: ctx.spec.port, targetPort: 'http', protocol: 'TCP' }],
          },
        });
        return { message: `Service ${ctx.object.name}: port ${ctx.spec.port}` };
      },
    },
  },
});
