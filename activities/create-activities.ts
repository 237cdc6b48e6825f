/**
 * The activities of the per-object workflow, built by {@link createActivities} from their clients:
 * observing the object (read, validate, add the finalizer), writing status, removing the finalizer,
 * and one activity per reconciler step. Activities keep no state between calls and may run more than
 * once.
 */
import { Context } from '@temporalio/activity';
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ObjectIdentity, Reconciler, StepResult } from '../reconcilers/define-reconciler';
import { stepActivityType, type ReconcilerPlan } from '../reconcilers/plan';
import type { ConditionSpec, ObjectRef, ObjectStatus, Phase } from '../workflows/definitions';
import { sameStatus } from '../workflows/object-state';
import { HomeostatError, isConflict, toApplicationFailure } from './errors';
import {
  childClient,
  defaultFieldManager,
  finalizerName,
  identityOf,
  PrimaryObjects,
  recordEvent,
  type CustomObject,
  type EventRecord,
} from './kubernetes';

/** What {@link createActivities} needs. */
export interface ActivityDeps {
  readonly kc: k8s.KubeConfig;
  /** Reconcilers by kind; their step implementations become activities. */
  readonly reconcilers: readonly Reconciler<never>[] | readonly Reconciler<any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly logger: Logger;
  /** @default 'homeostat' */
  readonly fieldManager?: string;
  /** `reportingInstance` of Events. @default 'homeostat-worker' */
  readonly reportingInstance?: string;
  /** Retries of a status or finalizer patch that lost a resourceVersion race (409). @default 5 */
  readonly conflictRetries?: number;
}

/** The input of {@link Activities.observeObject}. */
export interface ObserveInput {
  readonly ref: ObjectRef;
}

/** A snapshot of the object, as seen by {@link Activities.observeObject}. */
export interface ObjectSnapshot {
  readonly uid: string;
  readonly generation: number;
  readonly resourceVersion: string;
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean;
  readonly hasFinalizer: boolean;
  /** The status fields homeostat owns, without transition times. */
  readonly status: ObjectStatus;
  readonly identity: ObjectIdentity;
}

/** The result of {@link Activities.observeObject}. */
export type Observation =
  | { readonly found: false }
  | (ObjectSnapshot & {
      readonly found: true;
      /** The parsed spec (or, for an object being deleted whose spec no longer parses, the raw spec). */
      readonly spec: unknown;
    });

/** The details of an `InvalidSpec` failure thrown by {@link Activities.observeObject}. */
export interface InvalidSpecDetails {
  readonly code: 'ERR_INVALID_SPEC';
  readonly data: ObjectSnapshot;
}

/** The input of {@link Activities.writeStatus}. */
export interface WriteStatusInput {
  readonly ref: ObjectRef;
  /** The object's UID: a different object with the same name is left alone. */
  readonly uid: string;
  readonly status: {
    readonly observedGeneration: number;
    readonly phase: Phase;
    readonly conditions: readonly ConditionSpec[];
  };
  /** An Event to record once the status is written (for pass outcomes that change the phase). */
  readonly event?: EventRecord;
}

/** The result of {@link Activities.writeStatus}. */
export interface WriteStatusResult {
  readonly written: boolean;
  /** Why nothing was written. */
  readonly reason?: 'unchanged' | 'gone';
}

/** The input of a step activity. */
export interface StepInput {
  readonly ref: ObjectRef;
  readonly identity: ObjectIdentity;
  readonly spec: unknown;
}

/** What a step activity returns: the step's result and the attempt that produced it. */
export interface StepActivityResult extends StepResult {
  readonly attempt: number;
}

/** The generic activities (step activities are added under `<plural>.<group>/<step>`). */
export interface Activities {
  /** Reads the object; validates its spec (`InvalidSpec` when it does not parse); adds the finalizer. */
  observeObject(input: ObserveInput): Promise<Observation>;
  /** Writes status (status subresource, resourceVersion precondition, retried on 409) if it changed. */
  writeStatus(input: WriteStatusInput): Promise<WriteStatusResult>;
  /** Removes homeostat's finalizer; a missing object is success. */
  removeFinalizer(input: {
    readonly ref: ObjectRef;
    readonly uid: string;
    readonly event?: EventRecord;
  }): Promise<void>;
}

/** The status fields homeostat owns, as read, without transition times. */
export function ownedStatus(obj: CustomObject): ObjectStatus {
  const status = obj.status ?? {};
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Record<string, unknown>[]) : undefined;
  return {
    ...(typeof status.observedGeneration === 'number' ? { observedGeneration: status.observedGeneration } : {}),
    ...(typeof status.phase === 'string' ? { phase: status.phase as Phase } : {}),
    ...(conditions
      ? {
          conditions: conditions.map((c) => ({
            type: String(c.type),
            status: c.status as ConditionSpec['status'],
            reason: typeof c.reason === 'string' ? c.reason : '',
            message: typeof c.message === 'string' ? c.message : '',
            ...(typeof c.observedGeneration === 'number' ? { observedGeneration: c.observedGeneration } : {}),
          })),
        }
      : {}),
  };
}

function snapshotOf(obj: CustomObject): ObjectSnapshot {
  return {
    uid: obj.metadata.uid ?? '',
    generation: obj.metadata.generation ?? 0,
    resourceVersion: obj.metadata.resourceVersion ?? '',
    deleting: obj.metadata.deletionTimestamp != null,
    hasFinalizer: (obj.metadata.finalizers ?? []).includes(finalizerName),
    status: ownedStatus(obj),
    identity: identityOf(obj),
  };
}

/** Formats zod issues as one readable line: `spec.replicas: Too small: expected number to be >=0`. */
function formatIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues.map((i) => `${['spec', ...i.path.map(String)].join('.')}: ${i.message}`).join('; ');
}

/**
 * Builds the activities for a set of reconcilers. Every error leaves as an `ApplicationFailure` whose
 * type and retryability come from the error catalog.
 */
export function createActivities(deps: ActivityDeps): Activities & Record<string, (input: never) => Promise<unknown>> {
  const primary = new PrimaryObjects(deps.kc);
  const fieldManager = deps.fieldManager ?? defaultFieldManager;
  const conflictRetries = deps.conflictRetries ?? 5;
  const reporting = { controller: 'homeostat.dev/homeostat', instance: deps.reportingInstance ?? 'homeostat-worker' };
  const reconcilers = deps.reconcilers as readonly Reconciler<unknown>[];
  const log = deps.logger.child({ component: 'activities' });

  const reconcilerFor = (ref: ObjectRef): Reconciler<unknown> => {
    const r = reconcilers.find((x) => x.plan.group === ref.group && x.plan.kind === ref.kind);
    if (!r) throw new HomeostatError('ERR_UNKNOWN_KIND', `no reconciler for ${ref.kind}.${ref.group}`);
    return r;
  };

  /** Runs fn; maps anything thrown to an ApplicationFailure. */
  const guarded =
    <I, O>(fn: (input: I) => Promise<O>) =>
    async (input: I): Promise<O> => {
      try {
        return await fn(input);
      } catch (err) {
        throw toApplicationFailure(err);
      }
    };

  /** Patches metadata.finalizers with a resourceVersion precondition, re-reading on 409. */
  const patchFinalizers = async (
    plan: ReconcilerPlan,
    ref: ObjectRef,
    uid: string,
    start: CustomObject | undefined,
    change: (finalizers: string[]) => string[] | undefined,
  ): Promise<CustomObject | undefined> => {
    let obj = start ?? (await primary.get(plan, ref));
    for (let i = 0; ; i++) {
      if (!obj || obj.metadata.uid !== uid) return obj;
      const next = change(obj.metadata.finalizers ?? []);
      if (!next) return obj;
      try {
        return await primary.patch(plan, ref, {
          metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: next },
        });
      } catch (err) {
        if (!isConflict(err) || i >= conflictRetries) throw err;
        obj = await primary.get(plan, ref);
      }
    }
  };

  const activities: Activities = {
    observeObject: guarded(async ({ ref }: ObserveInput): Promise<Observation> => {
      const { plan, schema } = reconcilerFor(ref);
      let obj = await primary.get(plan, ref);
      if (!obj) return { found: false };
      const parsed = schema.safeParse(obj.spec ?? {});
      if (obj.metadata.deletionTimestamp != null) {
        return { found: true, ...snapshotOf(obj), spec: parsed.success ? parsed.data : obj.spec };
      }
      if (!parsed.success) {
        throw new HomeostatError('ERR_INVALID_SPEC', `invalid spec: ${formatIssues(parsed.error.issues)}`, {
          details: snapshotOf(obj),
        });
      }
      if (!(obj.metadata.finalizers ?? []).includes(finalizerName)) {
        obj = await patchFinalizers(plan, ref, obj.metadata.uid ?? '', obj, (f) =>
          f.includes(finalizerName) ? undefined : [...f, finalizerName],
        );
        if (!obj) return { found: false };
        log.info({ ref, uid: obj.metadata.uid }, 'finalizer added');
      }
      return { found: true, ...snapshotOf(obj), spec: parsed.data };
    }),

    writeStatus: guarded(async (input: WriteStatusInput): Promise<WriteStatusResult> => {
      const { plan } = reconcilerFor(input.ref);
      for (let i = 0; ; i++) {
        const obj = await primary.get(plan, input.ref);
        if (!obj || obj.metadata.uid !== input.uid) return { written: false, reason: 'gone' };
        if (sameStatus(ownedStatus(obj), input.status)) return { written: false, reason: 'unchanged' };
        const existing = Array.isArray(obj.status?.conditions)
          ? (obj.status.conditions as { type?: string; status?: string; lastTransitionTime?: string }[])
          : [];
        const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
        const conditions = input.status.conditions.map((c) => {
          const before = existing.find((e) => e.type === c.type);
          return {
            ...c,
            lastTransitionTime:
              before?.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now,
          };
        });
        try {
          await primary.patch(
            plan,
            input.ref,
            {
              metadata: { resourceVersion: obj.metadata.resourceVersion },
              status: { observedGeneration: input.status.observedGeneration, phase: input.status.phase, conditions },
            },
            'status',
          );
        } catch (err) {
          if (isConflict(err) && i < conflictRetries) {
            log.debug({ ref: input.ref, attempt: i }, 'status conflict, re-reading');
            continue;
          }
          throw err;
        }
        if (input.event) await recordEvent(deps.kc, identityOf(obj), input.event, reporting);
        return { written: true };
      }
    }),

    removeFinalizer: guarded(async ({ ref, uid, event }) => {
      const { plan } = reconcilerFor(ref);
      const before = await primary.get(plan, ref);
      if (before && event && before.metadata.uid === uid) {
        await recordEvent(deps.kc, identityOf(before), event, reporting);
      }
      await patchFinalizers(plan, ref, uid, before, (f) =>
        f.includes(finalizerName) ? f.filter((x) => x !== finalizerName) : undefined,
      );
    }),
  };

  const steps: Record<string, (input: StepInput) => Promise<StepActivityResult>> = {};
  for (const reconciler of reconcilers) {
    for (const [name, impl] of Object.entries(reconciler.steps)) {
      steps[stepActivityType(reconciler.plan, name)] = async (input: StepInput): Promise<StepActivityResult> => {
        const ctx = Context.current();
        const attempt = ctx.info.attempt;
        try {
          const result = await impl({
            ref: input.ref,
            object: input.identity,
            spec: input.spec,
            step: name,
            attempt,
            children: childClient(deps.kc, input.identity, fieldManager),
            heartbeat: (details?: unknown) => ctx.heartbeat(details),
            signal: ctx.cancellationSignal,
            log: log.child({ ref: input.ref, step: name, attempt }),
          });
          return { ...(result ?? {}), attempt };
        } catch (err) {
          throw toApplicationFailure(err, { attempt });
        }
      };
    }
  }
  return { ...steps, ...activities };
}
