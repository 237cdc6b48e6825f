/**
 * Activities: every side effect of a reconcile (reading the object, status, finalizers, children by
 * server-side apply, Events), built by {@link createActivities}; errors leave through the catalog in
 * `errors.ts` as retryable or terminal `ApplicationFailure`s with stable codes.
 */
export * from './create-activities';
export * from '../core/errors';
export { childClient, defaultFieldManager, finalizerName, microTime, recordEvent } from './kubernetes';
export type { CustomObject, EventRecord } from './kubernetes';
