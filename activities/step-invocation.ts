/**
 * Running a reconciler's steps: one activity per step (its context built from the input, regular
 * steps kept alive by heartbeats), and observe's part of a pass's leading local steps.
 */
import { Context } from '@temporalio/activity';
import type { LeadingStepOutcome, StepActivityResult, StepInput } from '../core/activity-contract';
import { defaultStepTimeout, durationMs, leadingLocalSteps, stepActivityType } from '../core/plan';
import type { PreviousStepResult, Reconciler, StepOutputs } from '../core/reconciler';
import { HomeostatError, toApplicationFailure } from '../core/errors';
import { inChildSpan } from '../core/in-span';
import { objectAttributes, traceAttributes } from '../core/trace-context';
import { readObject } from './kubernetes';
import { childClient } from './children';
import { specByDigest } from './spec-record';
import { stepActivityResult } from './step-result';
import type { ActivityContext } from './activity-context';

/** The step running of one worker's activities. */
export interface StepInvoker {
  /**
   * Observe's part of a pass's leading local steps: the first attempt of each, in order, stopping at
   * the first that fails (returned as data) or reports work still under way (its dependents wait).
   * `previous`: each step's latest success, by step name (`StepContext.previous`).
   */
  runLeadingSteps(
    reconciler: Reconciler<unknown>,
    base: Omit<StepInput, 'results' | 'previous'>,
    budgetMs: number,
    previous?: Readonly<Record<string, PreviousStepResult>>,
    /** The gated steps whose rule, asked this pass, needs no approval: the chain may run them. @default none */
    runsGated?: (step: string) => boolean,
  ): Promise<LeadingStepOutcome[]>;
  /** One activity per step of every reconciler, named by `stepActivityType`. */
  readonly steps: Record<string, (input: StepInput) => Promise<StepActivityResult>>;
}

/** Builds the step running on the shared clients of `c`. */
export function stepInvoker(c: ActivityContext): StepInvoker {
  const { kc, fieldManager, log, reconcilers, primary } = c;

  /**
   * Runs one attempt of a step's implementation: its context built from `input`, its result checked
   * (`stepActivityResult`). Throws what the step throws.
   */
  const invokeStep = async (
    reconciler: Reconciler<unknown>,
    name: string,
    input: StepInput,
    attempt: number,
    signal: AbortSignal,
    heartbeat: (details?: unknown) => void,
  ): Promise<StepActivityResult> => {
    const impl = reconciler.steps[name];
    if (!impl) throw new HomeostatError('ERR_UNKNOWN_KIND', `${reconciler.plan.kind} has no step ${name}`);
    // A span per step attempt in a traced pass, whether the step runs as its own activity or as one of
    // observe's leading steps: its Kubernetes calls hang under it.
    const stepSpan = {
      attributes: {
        ...objectAttributes(input.ref),
        [traceAttributes.generation]: input.identity.generation,
        [traceAttributes.step]: name,
        'homeostat.step.attempt': attempt,
      },
    };
    return inChildSpan(`step ${name}`, stepSpan, async () => {
      const spec = await specByDigest(primary, reconciler, input);
      const result = await impl({
        ref: input.ref,
        object: input.identity,
        spec,
        step: name,
        attempt,
        children: childClient(kc, input.identity, fieldManager),
        heartbeat,
        signal,
        log: log.child({ ref: input.ref, step: name, attempt }),
        results: input.results ?? {},
        ...(input.previous !== undefined ? { previous: input.previous } : {}),
        read: (object) => readObject(kc, input.identity, reconciler.reads ?? [], object),
      });
      return stepActivityResult(reconciler.plan.kind, name, result ?? {}, attempt);
    });
  };

  /**
   * Observe's part of a pass's leading local steps ({@link ObserveInput.leadingSteps}): the first
   * attempt of each, in order, each within its own start-to-close timeout (then aborted through its
   * signal), stopping at the first that fails. A failure is returned as data, not thrown: the
   * observation stands, and the workflow retries the step as it retries any step. A step that reports
   * `progressing` ends the chain too: the steps after it depend on it, and wait until it is done.
   */
  const runLeadingSteps = async (
    reconciler: Reconciler<unknown>,
    base: Omit<StepInput, 'results' | 'previous'>,
    budgetMs: number,
    previous: Readonly<Record<string, PreviousStepResult>> = {},
    runsGated?: (step: string) => boolean,
  ): Promise<LeadingStepOutcome[]> => {
    const ctx = Context.current();
    const outcomes: LeadingStepOutcome[] = [];
    const outputs: Record<string, StepOutputs> = {};
    for (const step of leadingLocalSteps(reconciler.plan.steps, budgetMs, runsGated)) {
      const before = previous[step.name];
      const input: StepInput = {
        ...base,
        ...(Object.keys(outputs).length > 0 ? { results: { ...outputs } } : {}),
        ...(before !== undefined ? { previous: before } : {}),
      };
      const timeoutMs = durationMs(step.startToCloseTimeout ?? defaultStepTimeout, 0);
      const abort = new AbortController();
      const onCancel = (): void => abort.abort(ctx.cancellationSignal.reason);
      ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new HomeostatError(
            'ERR_STEP_FAILED',
            `step ${step.name} did not finish within its start-to-close timeout (${timeoutMs} ms)`,
          );
          abort.abort(err);
          reject(err);
        }, timeoutMs);
      });
      try {
        const result = await Promise.race([
          invokeStep(reconciler, step.name, input, 1, abort.signal, () => {}),
          timedOut,
        ]);
        outcomes.push({ step: step.name, result });
        if (result.outputs !== undefined) outputs[step.name] = result.outputs;
        if (result.progressing !== undefined) break;
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        const failure = toApplicationFailure(err, { attempt: 1 });
        outcomes.push({
          step: step.name,
          failure: {
            message: failure.message,
            ...(failure.type ? { type: failure.type } : {}),
            nonRetryable: failure.nonRetryable === true,
            ...(failure.details ? { details: failure.details } : {}),
          },
        });
        break;
      } finally {
        clearTimeout(timer);
        ctx.cancellationSignal.removeEventListener('abort', onCancel);
      }
    }
    return outcomes;
  };

  const steps: Record<string, (input: StepInput) => Promise<StepActivityResult>> = {};
  for (const reconciler of reconcilers) {
    for (const name of Object.keys(reconciler.steps)) {
      steps[stepActivityType(reconciler.plan, name)] = async (input: StepInput): Promise<StepActivityResult> => {
        const ctx = Context.current();
        const attempt = ctx.info.attempt;
        const keepAlive = keepAliveHeartbeats(ctx);
        try {
          // A local step has no heartbeat to send (the workflow task's own heartbeat covers it).
          return await invokeStep(reconciler, name, input, attempt, ctx.cancellationSignal, (details?: unknown) =>
            keepAlive.heartbeat(details),
          );
        } catch (err) {
          throw toApplicationFailure(err, { attempt });
        } finally {
          keepAlive.stop();
        }
      };
    }
  }
  return { runLeadingSteps, steps };
}

/**
 * Heartbeats for a regular step with a heartbeat timeout every third of that timeout, repeating the
 * details the step last gave (so its checkpoint survives), whether or not the step heartbeats itself:
 * a worker that dies mid-step is noticed after the heartbeat timeout instead of the start-to-close
 * timeout, and the step moves to another worker. The first beat comes only after a third of the
 * timeout, so a short step sends none (each heartbeat that reaches the server is a billable action;
 * the SDK also throttles them to one per 80% of the timeout). A local step has no heartbeat: the
 * workflow task's own keeps it alive.
 */
function keepAliveHeartbeats(ctx: Context): { heartbeat(details?: unknown): void; stop(): void } {
  const timeoutMs = ctx.info.isLocal ? undefined : ctx.info.heartbeatTimeoutMs;
  let last: unknown = ctx.info.heartbeatDetails;
  const interval =
    timeoutMs !== undefined && timeoutMs > 0
      ? setInterval(() => ctx.heartbeat(last), Math.max(100, Math.floor(timeoutMs / 3)))
      : undefined;
  interval?.unref();
  return {
    heartbeat: (details?: unknown) => {
      if (ctx.info.isLocal) return;
      last = details;
      ctx.heartbeat(details);
    },
    stop: () => clearInterval(interval),
  };
}
