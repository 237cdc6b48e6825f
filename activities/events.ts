/** Kubernetes Events (`events.k8s.io/v1`) regarding a reconciled object, recorded once per dedup key. */
import { createHash } from 'node:crypto';
import type * as k8s from '@kubernetes/client-node';
import type { ObjectIdentity } from '../core/reconciler';
import type { EventRecord } from '../core/activity-contract';
import { fromKubernetesError } from '../core/errors';
import { objectApiFor } from './kubernetes';

/** RFC 3339 with microseconds, as `metav1.MicroTime` requires. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Records an Event regarding the object; an Event that already exists (a retry) is success. */
export async function recordEvent(
  kc: k8s.KubeConfig,
  regarding: ObjectIdentity,
  event: EventRecord,
  reporting: { controller: string; instance: string },
): Promise<void> {
  const objects = objectApiFor(kc);
  const namespace = regarding.namespace ?? 'default';
  const hash = createHash('sha256').update(`${regarding.uid}/${event.dedupKey}`).digest('hex').slice(0, 12);
  const body = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${regarding.name}.${hash}`, namespace },
    eventTime: microTime(new Date()),
    reportingController: reporting.controller,
    reportingInstance: reporting.instance,
    action: event.action,
    reason: event.reason,
    note: event.note.slice(0, 1024),
    type: event.type,
    regarding: {
      apiVersion: regarding.apiVersion,
      kind: regarding.kind,
      name: regarding.name,
      uid: regarding.uid,
      ...(regarding.namespace ? { namespace: regarding.namespace } : {}),
    },
  };
  try {
    await objects.create(body);
  } catch (err) {
    const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
    if (code === 409) return;
    // A namespace being deleted refuses new objects, Events included (403 "… because it is being
    // terminated"): an Event is a record, not the work, so it must not hold back the finalizer that
    // lets the namespace go.
    const body: unknown = (err as { body?: unknown }).body;
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? (err as Error).message);
    if (code === 403 && /being terminated/.test(text)) {
      return;
    }
    throw fromKubernetesError(err, `record event ${event.reason}`);
  }
}
