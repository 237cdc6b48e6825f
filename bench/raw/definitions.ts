/**
 * Wire definitions of the raw-Temporal baseline, importable by clients without workflow code: the
 * signal that requests a pass and the query that counts passes.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** What a pass of the raw workflow reconciles. */
export interface RawRequest {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number;
}

/** Requests a pass (signal-with-start starts the workflow on the first one). */
export const rawReconcileSignal = defineSignal<[RawRequest]>('raw-reconcile');

/** Passes finished so far. */
export const rawPassesQuery = defineQuery<number>('raw-passes');

/** The workflow type of the raw baseline. */
export const rawWorkflowType = 'rawWorkflow';
