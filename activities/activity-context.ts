/**
 * What the activities built by one `createActivities` call share: their clients, settings and the
 * lookup of an object's reconciler, built once from {@link ActivityDeps}.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ObjectRef } from '../core/definitions';
import { assertOperator, reconcilerFor as findReconciler, type Operator } from '../core/operator';
import type { Reconciler } from '../core/reconciler';
import { shareConnections } from '../core/kube-connections';
import { HomeostatError } from '../core/errors';
import { defaultFieldManager, PrimaryObjects } from './kubernetes';

/** What {@link createActivities} needs. */
export interface ActivityDeps {
  readonly kc: k8s.KubeConfig;
  /** The operator whose reconcilers' steps become activities (checked: every planned step implemented). */
  readonly operator: Operator;
  readonly logger: Logger;
  /** @default 'homeostat' */
  readonly fieldManager?: string;
  /** `reportingInstance` of Events. @default 'homeostat-worker' */
  readonly reportingInstance?: string;
  /** Retries of a status or finalizer patch that lost a resourceVersion race (409). @default 5 */
  readonly conflictRetries?: number;
}

/** The clients and settings the activities of one worker share. */
export interface ActivityContext {
  readonly kc: k8s.KubeConfig;
  readonly primary: PrimaryObjects;
  readonly fieldManager: string;
  readonly conflictRetries: number;
  /** Who Events name as their reporter. */
  readonly reporting: { readonly controller: string; readonly instance: string };
  readonly reconcilers: readonly Reconciler<unknown>[];
  readonly log: Logger;
  /** The reconciler of `ref`'s kind; throws `ERR_UNKNOWN_KIND` when the operator has none. */
  readonly reconcilerFor: (ref: ObjectRef) => Reconciler<unknown>;
}

/** Checks the operator and builds the shared context of its activities. */
export function activityContext(deps: ActivityDeps): ActivityContext {
  // Every pass makes several short requests: reuse connections instead of a TLS handshake each.
  shareConnections(deps.kc);
  assertOperator(deps.operator);
  return {
    kc: deps.kc,
    primary: new PrimaryObjects(deps.kc),
    fieldManager: deps.fieldManager ?? defaultFieldManager,
    conflictRetries: deps.conflictRetries ?? 5,
    reporting: { controller: 'homeostat.dev/homeostat', instance: deps.reportingInstance ?? 'homeostat-worker' },
    reconcilers: deps.operator.reconcilers as readonly Reconciler<unknown>[],
    log: deps.logger.child({ component: 'activities' }),
    reconcilerFor: (ref) => {
      const r = findReconciler(deps.operator, ref);
      if (!r) throw new HomeostatError('ERR_UNKNOWN_KIND', `no reconciler for ${ref.kind}.${ref.group}`);
      return r;
    },
  };
}
