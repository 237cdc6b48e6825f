/**
 * The bridge's Prometheus metrics, in a registry of its own (several bridges can live in one process,
 * as in tests). Names are prefixed `homeostat_bridge_`.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics of one bridge. */
export class BridgeMetrics {
  /** The registry to serve on `/metrics`. */
  readonly registry = new Registry();
  /** Watch event lines received, by resource and type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR). */
  readonly watchEvents = new Counter({
    name: 'homeostat_bridge_watch_events_total',
    help: 'Watch events received, by resource and event type',
    labelNames: ['resource', 'type'] as const,
    registers: [this.registry],
  });
  /** Signals delivered, by reason. */
  readonly signalsSent = new Counter({
    name: 'homeostat_bridge_signals_sent_total',
    help: 'Reconcile signals delivered to Temporal, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Requests merged into a pending one. */
  readonly signalsMerged = new Counter({
    name: 'homeostat_bridge_signals_merged_total',
    help: 'Reconcile requests merged into a pending request for the same object',
    registers: [this.registry],
  });
  /** Failed delivery attempts that are retried (the ones that cannot succeed count as dropped). */
  readonly signalsFailed = new Counter({
    name: 'homeostat_bridge_signals_failed_total',
    help: 'Failed signal deliveries that are retried with backoff (those that cannot succeed count as dropped)',
    registers: [this.registry],
  });
  /**
   * Owner references of owned objects that named no owner cached with that UID (an object that does
   * not exist, another object of that name, an owner of another shard): no signal is sent for them.
   */
  readonly unresolvedOwners = new Counter({
    name: 'homeostat_bridge_unresolved_owner_references_total',
    help: 'Owner references of owned objects that named no cached owner with that UID (ignored: no signal)',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  /**
   * Requests dropped because Temporal refused them in a way no retry changes (`reason`:
   * `invalid_argument`, `out_of_range`); each is logged.
   */
  readonly signalsDropped = new Counter({
    name: 'homeostat_bridge_signals_dropped_total',
    help: 'Reconcile requests dropped: Temporal refused them for good (invalid_argument, out_of_range), by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Keys with an undelivered request. */
  readonly dirtyKeys = new Gauge({
    name: 'homeostat_bridge_dirty_keys',
    help: 'Objects with an undelivered reconcile request',
    registers: [this.registry],
  });
  /**
   * Objects waiting for a delivery slot, by namespace (`_cluster`: cluster-scoped objects); namespaces
   * with none are left out, so the series are at most the namespaces with a backlog (hundreds are fine).
   */
  readonly queueDepth = new Gauge({
    name: 'homeostat_bridge_queue_depth',
    help: 'Objects whose reconcile request waits for a delivery slot, by namespace',
    labelNames: ['namespace'] as const,
    registers: [this.registry],
  });
  /**
   * Passes in flight: deliveries for a generation the object had not yet observed whose status does
   * not show it observed yet (see the bridge's `maxPassesInFlight`). At the limit, deliveries wait.
   */
  readonly passesInFlight = new Gauge({
    name: 'homeostat_bridge_passes_in_flight',
    help: 'Passes the bridge started whose object does not yet show them done (bounded by maxPassesInFlight)',
    registers: [this.registry],
  });
  /**
   * Pass slots freed, by reason: `done` (the object's status shows the generation observed, or the
   * object is gone), `timeout` (the hold time passed first), `failed` (the delivery failed). A high
   * `timeout` share means passes take longer than the hold time: slow steps, or workers down or short.
   */
  readonly passSlotReleases = new Counter({
    name: 'homeostat_bridge_pass_slot_releases_total',
    help: 'Pass slots freed, by reason (done, timeout, failed)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Watch restarts, by resource and reason (timeout, error, watchdog, list-error). */
  readonly watchRestarts = new Counter({
    name: 'homeostat_bridge_watch_restarts_total',
    help: 'Watch restarts, by resource and reason',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });
  /** Lists, by resource and reason (initial, gone, expired). */
  readonly relists = new Counter({
    name: 'homeostat_bridge_lists_total',
    help: 'Full lists, by resource and reason (initial, gone = 410 relist, expired continue token)',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });
  /** Cached objects, by resource. */
  readonly cacheObjects = new Gauge({
    name: 'homeostat_bridge_cache_objects',
    help: 'Objects in the cache, by resource',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  /** Estimated cache bytes, by resource. */
  readonly cacheBytes = new Gauge({
    name: 'homeostat_bridge_cache_bytes',
    help: 'Estimated bytes of the trimmed cached objects, by resource',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  /** 1 while this replica leads. */
  readonly isLeader = new Gauge({
    name: 'homeostat_bridge_is_leader',
    help: '1 while this replica holds the leader Lease',
    registers: [this.registry],
  });
  /** 1 once a resource's first list completed. */
  readonly synced = new Gauge({
    name: 'homeostat_bridge_synced',
    help: '1 once the resource has been listed',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });

  /**
   * Audits of the object workflows finished, by `result` (`ok`, `failed`): one after the caches first
   * sync and one per resync interval. A steady `failed` count means objects whose workflow was lost
   * are not being restarted.
   */
  readonly audits = new Counter({
    name: 'homeostat_bridge_workflow_audits_total',
    help: 'Audits of the running object workflows finished, by result (ok, failed)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  /** Workflows an audit started for cached objects that had none running (each is a lost workflow restored). */
  readonly auditStarts = new Counter({
    name: 'homeostat_bridge_workflow_audit_starts_total',
    help: 'Object workflows the audit started because the object had none running',
    registers: [this.registry],
  });

  /**
   * The controller-runtime style name of the bridge's work queue depth (the same number as
   * {@link dirtyKeys}), so one dashboard query covers the bridge's queue and the workers' task queue.
   */
  readonly workqueueDepth = new Gauge({
    name: 'homeostat_workqueue_depth',
    help: 'Requests waiting in the work queue: for the bridge, objects with an undelivered reconcile request',
    labelNames: ['name', 'type'] as const,
    registers: [this.registry],
    collect: async () => {
      const depth = (await this.dirtyKeys.get()).values[0]?.value ?? 0;
      this.workqueueDepth.set({ name: 'informer-bridge', type: 'signal' }, depth);
    },
  });

  /** @param processMetrics also collect Node's default process metrics @default false */
  constructor(processMetrics = false) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }
}
