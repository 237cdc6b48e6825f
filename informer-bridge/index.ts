/**
 * informer-bridge: sees the cluster and tells Temporal. One reflector per watched resource (paginated
 * list, watch with bookmarks and jittered timeouts, 410 relist with deletes for vanished objects,
 * restart with backoff, inactivity watchdog) fills a trimmed cache; predicates keep only changes a
 * reconciler cares about (generation, deletion, finalizers, declared labels/annotations), map owned
 * children to their owners (`child-changed`) and referenced objects (watched as metadata only) to the
 * objects that refer to them through an index of the reconcilers' `referencedBy` results
 * (`referenced-changed`); plurals and scopes come from API discovery; a per-object coalescing queue
 * delivers level-based
 * reconcile requests with `signalWithStart` (one in flight per object, retried while Temporal is
 * down); a safety net signals objects whose generation is not yet observed. Replicas elect a leader
 * on a Lease; only the leader delivers. Run it with `main.ts`; embed it with {@link Bridge}.
 */
export { Backoff, type BackoffOptions } from './backoff';
export { Bridge } from './bridge';
export type { BridgeOptions, LeaderElectionOptions } from './bridge-options';
export { ObjectCache, trimObject, objectKey, estimateBytes, lastAppliedAnnotation } from './cache';
export {
  bridgeEnvSchema,
  loadBridgeConfig,
  parseBridgeConfig,
  watchedResourceSchema,
  type BridgeConfig,
} from './config';
export { mergeRequests, signalDelivery, type SignalDeliveryOptions } from './delivery';
export {
  kubeRequest,
  kubeWatch,
  collectionPath,
  KubeRequestError,
  type KubeRequestOptions,
  type KubeResponse,
  type KubeWatchOptions,
} from './kube-http';
export {
  ApiDiscovery,
  DiscoveryError,
  type ApiDiscoveryOptions,
  type DiscoveredResource,
  type ResourceMapper,
} from './discovery';
export { watchedResourcesFor, type WatchSource } from './operator-resources';
export {
  ReferenceIndex,
  referenceKey,
  referencedKeys,
  referenceMappings,
  maxReferencesPerObject,
  type ReferenceMapping,
} from './references';
export { LeaderElector, type LeaderElectorOptions } from './leader';
export { BridgeMetrics } from './metrics';
export { relevantChange, ownersOf, isBehind, parseApiVersion, type OwnerTarget } from './predicates';
export { CoalescingQueue, type CoalescingQueueOptions } from './queue';
export {
  Reflector,
  metadataListAccept,
  metadataWatchAccept,
  type ReflectorEvent,
  type ReflectorHandler,
  type ReflectorOptions,
} from './reflector';
export { startHttpServer } from './server';
export {
  isPrimary,
  systemClock,
  sleepOn,
  type Clock,
  type KubeObject,
  type ObjectMeta,
  type OwnerKind,
  type OwnerReference,
  type Random,
  type WatchedResource,
} from './types';
