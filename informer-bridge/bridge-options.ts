/** The options of the informer bridge (`Bridge`) and of its leader election. */
import type { FairnessSetting } from '../core/fairness';
import type * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { BackoffOptions } from './backoff';
import type { BridgeMetrics } from './metrics';
import type { WatchSource } from './operator-resources';
import type { Clock, Random, WatchedResource } from './types';

/** Leader election settings of a `Bridge`. */
export interface LeaderElectionOptions {
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** @default 'homeostat-informer-bridge' */
  readonly name?: string;
  /** This replica's identity. */
  readonly identity: string;
  /** @default 15_000 */
  readonly leaseDurationMs?: number;
  /** @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** @default 2_000 */
  readonly retryPeriodMs?: number;
}

/** Options of `Bridge`. */
export interface BridgeOptions {
  readonly kc: k8s.KubeConfig;
  /** The kinds to watch: the reconcilers' kinds, the kinds they own and the kinds they reference. */
  readonly resources: readonly WatchedResource[];
  /**
   * The operator (or its reconcilers' plans and references): required when a resource has
   * `referrers`, whose changes map to primaries through the reconcilers' `referencedBy` functions.
   * @default none
   */
  readonly operator?: WatchSource;
  /** Watch only this namespace. @default all namespaces */
  readonly namespace?: string;
  /**
   * Watch only objects matching this label selector (sharding); applies to primary and owned kinds,
   * not to referenced kinds (a shared Secret carries no shard label; a kind both owned and referenced
   * is watched whole, and its owners found through ownerReferences as usual). @default all objects
   */
  readonly labelSelector?: string;
  readonly client: Client;
  readonly taskQueue: string;
  /** Fairness weights by namespace for the workflows it starts (see `core/fairness.ts`), or `false` for none. @default every namespace 1 */
  readonly fairnessWeights?: FairnessSetting;
  readonly log: Logger;
  /** Leader election; `false` to deliver without it (a single replica). */
  readonly leaderElection: LeaderElectionOptions | false;
  /** Signals in flight at most. @default 16 */
  readonly concurrency?: number;
  /**
   * Passes in flight at most: deliveries for a generation the object has not yet observed (a create, a
   * spec change, a deletion) each hold a slot until the object's status shows that generation observed
   * (or the object is gone), or for {@link passHoldMs}; while every slot is held no signal is sent, and
   * the backlog waits in the bridge's queue, fair across namespaces, instead of in the workers' task
   * queues (a worker's sticky queue is first-in, first-out: see docs/fairness.md). `0` turns it off.
   * @default 32
   */
  readonly maxPassesInFlight?: number;
  /**
   * Of {@link maxPassesInFlight}, the passes one namespace may hold at once: while it holds that many
   * its objects wait and other namespaces' are delivered, so one team's flood shares the workers with at
   * most this many of its passes at a time. (With fairness off every object is in one group: this is
   * then the limit for all.) @default 8
   */
  readonly maxPassesInFlightPerNamespace?: number;
  /** A pass not seen done after this long stops holding its slot (it waits on something by then). @default 10_000 */
  readonly passHoldMs?: number;
  /** Period of the safety-net resync. @default 300_000 */
  readonly resyncIntervalMs?: number;
  /**
   * Whether each resync also audits the object workflows (`Bridge.auditWorkflows`): starts the
   * workflow of any cached object that has none running. @default true
   */
  readonly auditWorkflows?: boolean;
  /** Timeout of one signal attempt. @default 10_000 */
  readonly deliveryTimeoutMs?: number;
  /** Least time between two signals to one object (bursts merge meanwhile). @default 500 */
  readonly minSignalIntervalMs?: number;
  /** Per-object retry backoff while Temporal is unavailable. @default 500 ms doubling to 5 s */
  readonly retryBackoff?: BackoffOptions;
  /** List page size. @default 500 */
  readonly pageSize?: number;
  /** Server-side watch timeout base (jittered to [t, 2t)). @default 300 */
  readonly watchTimeoutSeconds?: number;
  /** Watch inactivity watchdog. @default 300_000 */
  readonly inactivityTimeoutMs?: number;
  /** Reflector restart backoff. @default 800 ms doubling to 30 s */
  readonly watchBackoff?: BackoffOptions;
  /** @default a new registry */
  readonly metrics?: BridgeMetrics;
  /** @default the system clock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: Random;
}
