/**
 * `Tenant` (platform.example.com/v1alpha1, cluster-scoped): one team's home on the cluster. For each
 * Tenant homeostat keeps a Namespace named after it, and in it a ResourceQuota, a LimitRange, a
 * RoleBinding that gives the team's group the `edit` ClusterRole, and a NetworkPolicy that denies
 * ingress from outside by default. A child deleted or edited by hand is put back.
 *
 * Deleting a Tenant needs no cleanup step: every child carries the Tenant as its controller
 * ownerReference, so Kubernetes' garbage collector deletes them (and the namespace controller empties
 * the Namespace). A Namespace that already existed is never adopted, so it is never deleted either.
 * Cleanup steps are for what Kubernetes does not own: a record in an external system, a bucket.
 */
import type {
  KubernetesObject,
  V1LimitRange,
  V1Namespace,
  V1NetworkPolicy,
  V1ResourceQuota,
  V1RoleBinding,
} from '@kubernetes/client-node';
import { z } from 'zod';
import {
  celRule,
  childLabels,
  definePlan,
  defineReconciler,
  managedByValue,
  terminal,
  type ObjectIdentity,
} from '../../../reconcilers';

/** A Kubernetes quantity such as `500m`, `2` or `4Gi`. */
const quantity = z
  .string()
  .max(32)
  .regex(/^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/, 'a quantity such as 500m, 2 or 4Gi');

const defaultQuota = { cpu: '4', memory: '8Gi', pods: 20 };
const defaultLimits = { cpu: '500m', memory: '512Mi', requestCpu: '100m', requestMemory: '128Mi' };

/**
 * The spec of a `Tenant`. Each field's `.describe()` is its description in the CRD: `kubectl explain
 * tenant.spec.quota` prints it.
 */
export const tenantSpec = z.object({
  group: celRule(
    z.string().min(1).max(253),
    // system: groups are Kubernetes' own (system:authenticated is everyone): never a team.
    { rule: "!self.startsWith('system:')", message: 'group must not be a system: group' },
    (group) => !group.startsWith('system:'),
  ).describe("The team's group, as your identity provider names it: it gets edit in the Tenant's Namespace."),
  quota: z
    .object({
      cpu: quantity.default(defaultQuota.cpu).describe('CPU the Namespace may request and use in total.'),
      memory: quantity.default(defaultQuota.memory).describe('Memory the Namespace may request and use in total.'),
      pods: z.number().int().min(0).max(10_000).default(defaultQuota.pods).describe('The most Pods in the Namespace.'),
    })
    .default(defaultQuota)
    .describe('What the whole Namespace may request (a ResourceQuota).'),
  limits: z
    .object({
      cpu: quantity.default(defaultLimits.cpu).describe('The CPU limit of a container that states none.'),
      memory: quantity.default(defaultLimits.memory).describe('The memory limit of a container that states none.'),
      requestCpu: quantity
        .default(defaultLimits.requestCpu)
        .describe('The CPU request of a container that states none.'),
      requestMemory: quantity
        .default(defaultLimits.requestMemory)
        .describe('The memory request of a container that states none.'),
    })
    .default(defaultLimits)
    .describe('Defaults for containers that state no requests or limits (a LimitRange).'),
});

/** A parsed `Tenant` spec. */
export type TenantSpec = z.output<typeof tenantSpec>;

/** The plan: the Namespace first, then the four objects in it, in parallel. */
export const tenantPlan = definePlan({
  group: 'platform.example.com',
  version: 'v1alpha1',
  kind: 'Tenant',
  plural: 'tenants',
  scope: 'Cluster',
  owns: [
    { apiVersion: 'v1', kind: 'Namespace' },
    { apiVersion: 'v1', kind: 'ResourceQuota' },
    { apiVersion: 'v1', kind: 'LimitRange' },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
  ],
  steps: [
    { name: 'namespace', summary: 'apply the Namespace' },
    { name: 'quota', dependsOn: ['namespace'], summary: 'apply the ResourceQuota' },
    { name: 'limits', dependsOn: ['namespace'], summary: 'apply the LimitRange' },
    { name: 'access', dependsOn: ['namespace'], summary: "bind the team's group to edit" },
    { name: 'network', dependsOn: ['namespace'], summary: 'apply the default-deny NetworkPolicy' },
  ],
  driftCheckInterval: '10 minutes',
});

/** The label every child carries: which Tenant it belongs to. */
export const tenantLabel = 'platform.example.com/tenant';

type Child = Pick<KubernetesObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } };

/** References to a Tenant's children: its Namespace and the four objects in it. */
export function childrenOf(tenant: string) {
  const inNamespace = (apiVersion: string, kind: string, name: string): Child => ({
    apiVersion,
    kind,
    metadata: { name, namespace: tenant },
  });
  return {
    namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: tenant } } satisfies Child,
    quota: inNamespace('v1', 'ResourceQuota', 'tenant-quota'),
    limits: inNamespace('v1', 'LimitRange', 'tenant-limits'),
    access: inNamespace('rbac.authorization.k8s.io/v1', 'RoleBinding', 'tenant-edit'),
    network: inNamespace('networking.k8s.io/v1', 'NetworkPolicy', 'default-deny-ingress'),
  };
}

/** Whether this Tenant is the controller of an object (its ownerReference, with the same UID). */
const controls = (object: ObjectIdentity, child: KubernetesObject | undefined): boolean =>
  child?.metadata?.ownerReferences?.some((r) => r.controller && r.uid === object.uid) ?? false;

const labels = (object: ObjectIdentity): Record<string, string> => ({
  [tenantLabel]: object.name,
  [childLabels.managedBy]: managedByValue,
});

/** The `Tenant` reconciler. */
export const tenant = defineReconciler({
  plan: tenantPlan,
  schema: tenantSpec,
  crd: {
    shortNames: ['tnt'],
    columns: [
      { name: 'Group', type: 'string', jsonPath: '.spec.group' },
      { name: 'CPU', type: 'string', jsonPath: '.spec.quota.cpu', priority: 1 },
      { name: 'Memory', type: 'string', jsonPath: '.spec.quota.memory', priority: 1 },
    ],
  },
  // Steps read only their own children here. Any other read (`ctx.read`) outside the object's namespace
  // is declared per kind: `reads: [{ apiVersion: 'v1', kind: 'ConfigMap', scope: { namespace: 'shared' } }]`
  // (or scope 'cluster' / 'anyNamespace'); an undeclared read fails the step terminally
  // (docs/writing-a-reconciler.md, "Reads are confined like writes").
  steps: {
    // The context's functions are plain properties: destructure them as you like.
    async namespace({ object, children: { read, apply } }) {
      const name = object.name;
      if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) {
        throw terminal(new Error(`Tenant name ${name} is not a valid Namespace name (a DNS label of 63 characters)`));
      }
      const existing = await read<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      if (existing?.metadata?.deletionTimestamp) {
        throw new Error(`Namespace ${name} is still being deleted`); // retried with backoff until it is gone
      }
      if (existing && !controls(object, existing)) {
        // Refuse, don't adopt: a Namespace that someone else made stays theirs.
        throw terminal(new Error(`Namespace ${name} already exists and does not belong to this Tenant`));
      }
      await apply<V1Namespace>({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name,
          labels: { ...labels(object), 'pod-security.kubernetes.io/enforce': 'baseline' },
        },
      });
      return { outputs: { namespace: name }, message: `Namespace ${name}` };
    },

    async quota({ object, spec, results, children }) {
      const namespace = String(results.namespace?.namespace);
      const { cpu, memory, pods } = spec.quota;
      await children.apply<V1ResourceQuota>({
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { ...childrenOf(object.name).quota.metadata, namespace, labels: labels(object) },
        spec: {
          hard: {
            'requests.cpu': cpu,
            'limits.cpu': cpu,
            'requests.memory': memory,
            'limits.memory': memory,
            pods: String(pods),
          },
        },
      });
      return { message: `quota ${cpu} CPU, ${memory}, ${pods} pods` };
    },

    async limits({ object, spec, results, children }) {
      const namespace = String(results.namespace?.namespace);
      const { cpu, memory, requestCpu, requestMemory } = spec.limits;
      await children.apply<V1LimitRange>({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { ...childrenOf(object.name).limits.metadata, namespace, labels: labels(object) },
        spec: {
          limits: [
            {
              type: 'Container',
              _default: { cpu, memory },
              defaultRequest: { cpu: requestCpu, memory: requestMemory },
            },
          ],
        },
      });
      return { message: `container defaults ${cpu} CPU, ${memory}` };
    },

    async access({ object, spec, results, children }) {
      const namespace = String(results.namespace?.namespace);
      await children.apply<V1RoleBinding>({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { ...childrenOf(object.name).access.metadata, namespace, labels: labels(object) },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: spec.group }],
      });
      return { message: `group ${spec.group} can edit ${namespace}` };
    },

    async network({ object, results, children }) {
      const namespace = String(results.namespace?.namespace);
      await children.apply<V1NetworkPolicy>({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { ...childrenOf(object.name).network.metadata, namespace, labels: labels(object) },
        // Every pod selected, no ingress rule: nothing may connect in until the team allows it.
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      });
      return { message: 'ingress denied by default' };
    },
  },
});
