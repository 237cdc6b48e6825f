/**
 * The `planObject` activity: a dry run of one object (`core/dry-run.ts`). It reads the object — or
 * validates a manifest as the API server would (a server-side apply with `dryRun: All`: the CRD's
 * schema, defaults and admission) — validates the spec as observe does, then runs the steps in
 * dependency order, each in its dry-run form: its preview, or the step itself when it declares
 * `'children-only'`, against a children client that applies with `dryRun: All` and records diffs. A
 * step with neither is never run (homeostat cannot intercept a client the step opens itself): it is
 * reported "would run; no preview". Nothing here writes: every write request carries `dryRun=All`.
 */
import * as k8s from '@kubernetes/client-node';
import { Context } from '@temporalio/activity';
import type { ObjectRef } from '../core/definitions';
import {
  stepsWouldChange,
  type DryRunResult,
  type DryRunStep,
  type PlannedChange,
  type PlanInput,
} from '../core/dry-run';
import { executionLayers, type StepPlan } from '../core/plan';
import type { StepContext, StepOutputs, StepPreviewFn } from '../core/reconciler';
import { errorCatalog, fromKubernetesError, HomeostatError, isHomeostatError } from '../core/errors';
import { identityOf, objectApiFor, readObject, type CustomObject } from './kubernetes';
import { dryRunChildren } from './dry-run-children';
import { formatIssues } from './observe';
import { oversizeProblem } from './spec-record';
import type { ActivityContext } from './activity-context';

/** The field manager a manifest's validating dry-run apply uses (never a real write). */
export const planFieldManager = 'homeostat-plan';

/** The most changes one step's preview may list (the rest are counted in one last entry). */
const maxChanges = 200;

const apiVersionOf = (ref: ObjectRef): string => (ref.group ? `${ref.group}/${ref.version}` : ref.version);

/** The manifest, checked to name `ref`, validated by a dry-run server-side apply: the object it would be. */
async function validatedManifest(
  c: ActivityContext,
  ref: ObjectRef,
  manifest: Readonly<Record<string, unknown>>,
): Promise<CustomObject> {
  const meta = (manifest.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const problems = [
    manifest.apiVersion !== apiVersionOf(ref) && `apiVersion must be ${apiVersionOf(ref)}`,
    manifest.kind !== ref.kind && `kind must be ${ref.kind}`,
    meta.name !== ref.name && `metadata.name must be ${ref.name}`,
    meta.namespace !== undefined &&
      meta.namespace !== (ref.namespace ?? '') &&
      `metadata.namespace must be ${ref.namespace ?? 'absent (the kind is cluster-scoped)'}`,
  ].filter((p): p is string => typeof p === 'string');
  if (problems.length > 0) {
    throw new HomeostatError('ERR_INVALID_MANIFEST', `the manifest does not name the object: ${problems.join('; ')}`);
  }
  // What a manifest may say of its metadata; the rest (uid, resourceVersion, managedFields, owners,
  // finalizers, timestamps) is the server's or the controllers', never the planner's.
  const { status: _status, metadata: given, ...rest } = manifest;
  const { labels, annotations } = (given ?? {}) as { labels?: unknown; annotations?: unknown };
  const body = {
    ...rest,
    metadata: {
      name: ref.name,
      ...(ref.namespace ? { namespace: ref.namespace } : {}),
      ...(labels !== undefined ? { labels } : {}),
      ...(annotations !== undefined ? { annotations } : {}),
    },
  } as k8s.KubernetesObject;
  try {
    return (await objectApiFor(c.kc).patch(
      body,
      undefined,
      'All',
      planFieldManager,
      true,
      k8s.PatchStrategy.ServerSideApply,
    )) as unknown as CustomObject;
  } catch (err) {
    const e = fromKubernetesError(err, 'the API server refused the manifest');
    if (e.code === 'ERR_K8S_REJECTED') throw new HomeostatError('ERR_INVALID_MANIFEST', e.message, { cause: err });
    throw e;
  }
}

/** A preview's answer as changes and outputs. */
function normalized(answer: Awaited<ReturnType<StepPreviewFn<unknown>>>): {
  changes: PlannedChange[];
  outputs?: StepOutputs;
} {
  const list = Array.isArray(answer) ? answer : ((answer as { changes?: unknown[] } | undefined)?.changes ?? []);
  const outputs = Array.isArray(answer) ? undefined : (answer as { outputs?: StepOutputs } | undefined)?.outputs;
  const changes = (list as (string | PlannedChange)[]).map((c) =>
    typeof c === 'string' ? { action: 'change', target: c } : { ...c },
  );
  if (changes.length > maxChanges) {
    const more = changes.length - maxChanges + 1;
    changes.splice(maxChanges - 1, changes.length, { action: 'more', target: `${more} more changes` });
  }
  return { changes, ...(outputs !== undefined ? { outputs } : {}) };
}

/** Every step `step` depends on, directly or not. */
function ancestors(steps: readonly StepPlan[], name: string): Set<string> {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const out = new Set<string>();
  const visit = (n: string): void => {
    for (const d of byName.get(n)?.dependsOn ?? []) {
      if (out.has(d)) continue;
      out.add(d);
      visit(d);
    }
  };
  visit(name);
  return out;
}

/** Builds the `planObject` activity (unguarded: errors leave as thrown). */
export function planObject(c: ActivityContext): (input: PlanInput) => Promise<DryRunResult> {
  return async ({ ref, manifest }: PlanInput): Promise<DryRunResult> => {
    const reconciler = c.reconcilerFor(ref);
    const { plan, schema } = reconciler;
    const stored = await c.primary.get(plan, ref);
    if (!stored && manifest === undefined) {
      throw new HomeostatError(
        'ERR_PLAN_OBJECT_NOT_FOUND',
        `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name} does not exist`,
      );
    }
    const obj = manifest !== undefined ? await validatedManifest(c, ref, manifest) : (stored as CustomObject);
    const oversize = oversizeProblem(obj.spec);
    if (oversize !== undefined) throw new HomeostatError('ERR_INVALID_SPEC', `invalid spec: ${oversize}`);
    const parsed = schema.safeParse(obj.spec ?? {});
    const cleanup = stored?.metadata.deletionTimestamp != null && manifest === undefined;
    if (!parsed.success && !cleanup) {
      throw new HomeostatError('ERR_INVALID_SPEC', `invalid spec: ${formatIssues(parsed.error.issues)}`);
    }
    const spec = parsed.success ? parsed.data : obj.spec;
    const identity = identityOf(obj);
    const steps = (cleanup ? plan.cleanup : plan.steps) ?? [];
    const activity = Context.current();
    const children = dryRunChildren(c.kc, identity, c.fieldManager);
    const outputs: Record<string, StepOutputs> = {};
    const done = new Map<string, DryRunStep>();
    for (const name of executionLayers(steps).flat()) {
      const step = steps.find((s) => s.name === name);
      const blocked = (step?.dependsOn ?? []).find((d) => done.get(d)?.outcome !== 'previewed');
      const preview = reconciler.previews?.[name];
      const base = { name, children: [], changes: [] };
      if (blocked !== undefined) {
        done.set(name, { ...base, outcome: 'skipped', message: `depends on ${blocked}, which did not preview` });
        continue;
      }
      if (preview === undefined) {
        done.set(name, { ...base, outcome: 'no-preview', message: 'would run; no preview' });
        continue;
      }
      const deps = ancestors(steps, name);
      const ctx: StepContext<unknown> = {
        ref,
        object: identity,
        spec,
        step: name,
        attempt: 1,
        children: children.client,
        heartbeat: (details?: unknown) => activity.heartbeat(details),
        signal: activity.cancellationSignal,
        log: c.log.child({ ref, step: name, dryRun: true }),
        results: Object.fromEntries(Object.entries(outputs).filter(([n]) => deps.has(n))),
        read: (o) => readObject(c.kc, identity, reconciler.reads ?? [], o),
        dryRun: true,
      };
      try {
        if (preview === 'children-only') {
          const impl = reconciler.steps[name];
          if (!impl) throw new HomeostatError('ERR_UNKNOWN_KIND', `${plan.kind} has no step ${name}`);
          const result = await impl(ctx);
          if (result?.outputs !== undefined) outputs[name] = result.outputs;
          done.set(name, { ...base, outcome: 'previewed', children: children.take() });
        } else {
          const answer = normalized(await preview(ctx));
          if (answer.outputs !== undefined) outputs[name] = answer.outputs;
          done.set(name, { ...base, outcome: 'previewed', children: children.take(), changes: answer.changes });
        }
      } catch (err) {
        if (activity.cancellationSignal.aborted) throw err;
        const e = isHomeostatError(err) ? err : undefined;
        const unavailable = e?.code === 'ERR_WRITES_UNAVAILABLE_IN_DRY_RUN';
        done.set(name, {
          ...base,
          outcome: unavailable ? 'no-preview' : 'failed',
          children: children.take(),
          message: unavailable
            ? `would run; no preview (${e.message})`
            : err instanceof Error
              ? err.message
              : String(err),
          ...(e && !unavailable ? { code: errorCatalog[e.code].type } : {}),
        });
      }
    }
    const result = [...done.values()];
    return {
      version: 1,
      ref,
      source: manifest !== undefined ? 'manifest' : 'stored',
      exists: stored !== undefined,
      pass: cleanup ? 'cleanup' : 'reconcile',
      steps: result,
      changed: stepsWouldChange(result),
    };
  };
}
