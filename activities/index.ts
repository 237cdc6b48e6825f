/**
 * Activities: every side effect of a reconcile (reading the object, status, finalizers, children by
 * server-side apply, Events), built by {@link createActivities}; errors leave through the catalog in
 * `core/errors.ts` as retryable or terminal `ApplicationFailure`s with stable codes. The contract with
 * the workflow (inputs and results) lives in `core/activity-contract.ts`.
 */
export * from './create-activities';
export { defaultFieldManager, finalizerName, readObject } from './kubernetes';
export type { CustomObject } from './kubernetes';
export { childClient } from './children';
export { microTime, recordEvent } from './events';
