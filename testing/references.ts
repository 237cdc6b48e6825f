/**
 * How the test environment names objects: a reference (apiVersion, kind, name, namespace), an object
 * as the API server stored it, and the keys and descriptions made of them.
 */
import type * as k8s from '@kubernetes/client-node';

/** Names an object: its apiVersion, kind, name and (for a namespaced kind) namespace. A whole object will do. */
export type ObjectReference = Pick<k8s.KubernetesObject, 'apiVersion' | 'kind'> & {
  readonly metadata: { readonly name: string; readonly namespace?: string };
};

/**
 * An object as the API server stored it: the input's fields with the metadata the server sets — its
 * `uid`, its `resourceVersion` and (for kinds with a spec, such as custom resources) the `generation`
 * that {@link TestEnvironment.waitForCondition} waits for homeostat to observe.
 */
export type StoredObject<T extends k8s.KubernetesObject> = T & {
  metadata: NonNullable<T['metadata']> & {
    readonly name: string;
    readonly uid: string;
    readonly resourceVersion: string;
    readonly generation?: number;
  };
};

/** `Kind namespace/name`, for messages. */
export const describeRef = (ref: ObjectReference): string =>
  `${ref.kind ?? '?'} ${ref.metadata.namespace ? `${ref.metadata.namespace}/` : ''}${ref.metadata.name}`;

/** A map key of an object: apiVersion, kind, namespace and name. */
export const keyOf = (ref: ObjectReference): string =>
  `${ref.apiVersion ?? ''}/${ref.kind ?? ''}/${ref.metadata.namespace ?? ''}/${ref.metadata.name}`;
