/**
 * The informer bridge: one reflector per watched resource feeding a cache; predicates, owner mapping
 * and the reference index turn cache changes into reconcile requests; a coalescing queue delivers
 * them to Temporal while this replica leads; a safety net signals objects whose generation is not yet
 * observed.
 */
import type { ObjectRef, ReconcileReason, ReconcileRequest } from '../core/definitions';
import { workflowIdFor } from '../core/definitions';
import { fairnessKeyFor } from '../core/fairness';
import type { BridgeOptions } from './bridge-options';
import { objectKey } from './cache';
import { mergeRequests, signalDelivery } from './delivery';
import { permanentDeliveryFailure } from './delivery-failures';
import { LeaderElector } from './leader';
import { BridgeMetrics } from './metrics';
import { OwnedEvents } from './owned-events';
import { isBehind, relevantChange } from './predicates';
import { CoalescingQueue } from './queue';
import { referenceKey, ReferenceIndex, type ReferenceMapping, referenceMappings, referencedKeys } from './references';
import { Reflector, type ReflectorEvent } from './reflector';
import { type Clock, isPrimary, type KubeObject, systemClock, type WatchedResource } from './types';
import { auditObjectWorkflows, auditStopWaitMs } from './workflow-audit';
import { WorkqueueMetrics } from './workqueue-metrics';

/** {@link BridgeOptions.maxPassesInFlight}'s default. */
export const defaultMaxPassesInFlight = 32;
/** {@link BridgeOptions.maxPassesInFlightPerNamespace}'s default. */
export const defaultMaxPassesInFlightPerNamespace = 8;
/** {@link BridgeOptions.passHoldMs}'s default. */
export const defaultPassHoldMs = 10_000;

function resourceName(r: WatchedResource): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

/**
 * The selector a resource is listed with: the bridge's (sharding) and the primary's own, both required.
 * Referenced kinds ignore the bridge's: a shared Secret carries no shard label.
 */
function selectorFor(resource: WatchedResource, bridgeSelector: string | undefined): string | undefined {
  const parts = [resource.referrers ? undefined : bridgeSelector, resource.labelSelector];
  const joined = parts.filter((p): p is string => Boolean(p)).join(',');
  return joined || undefined;
}

/** Where a primary object is found again: its resource and its cache key. */
interface PrimaryLocation {
  readonly resource: WatchedResource;
  readonly key: string;
}

/** Watches the configured resources and delivers reconcile signals to Temporal. */
export class Bridge {
  /** The bridge's metrics. */
  readonly metrics: BridgeMetrics;
  private readonly opts: BridgeOptions;
  private readonly clock: Clock;
  private readonly reflectors: { resource: WatchedResource; reflector: Reflector }[];
  private readonly queue: CoalescingQueue<ReconcileRequest>;
  private readonly elector: LeaderElector | undefined;
  /** `referencedBy` functions by primary kind (`group/kind`). */
  private readonly referenceMaps: Map<string, ReferenceMapping[]>;
  private readonly references = new ReferenceIndex<PrimaryLocation>();
  private readonly owned: OwnedEvents;
  private leading = false;
  private auditing = false;
  /** The audit running in the background, which {@link stop} waits for (no call may outlive a stop). */
  private auditRun: Promise<void> | undefined;
  private cancelResync: () => void = () => {};
  private stopping = false;

  constructor(options: BridgeOptions) {
    this.opts = options;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? new BridgeMetrics();
    const log = options.log;
    const controllers = options.resources.filter(isPrimary).map((r) => r.kind.toLowerCase());
    const workqueue = new WorkqueueMetrics(this.metrics.registry, this.clock, [...new Set(controllers)]);
    this.queue = new CoalescingQueue<ReconcileRequest>({
      deliver: signalDelivery({
        client: options.client,
        taskQueue: options.taskQueue,
        timeoutMs: options.deliveryTimeoutMs,
        ...(options.fairnessWeights !== undefined ? { fairnessWeights: options.fairnessWeights } : {}),
      }),
      merge: mergeRequests,
      // Round-robin across namespaces, weighted as their workflows are on Temporal's task queue.
      ...(options.fairnessWeights === false
        ? {}
        : {
            groupOf: (_key: string, req: ReconcileRequest) => fairnessKeyFor(req.ref),
            weightOf: (namespace: string) => (options.fairnessWeights || {})[namespace] ?? 1,
          }),
      // Real changes before the safety net's resyncs (controller-runtime's priority queue does the same
      // with its initial list and resyncs; the bridge's first list sends nothing at all).
      bandOf: (req) => (req.reason === 'resync' ? 1 : 0),
      concurrency: options.concurrency,
      ...(options.maxPassesInFlight === 0
        ? {}
        : {
            admission: {
              limit: options.maxPassesInFlight ?? defaultMaxPassesInFlight,
              perGroupLimit: options.maxPassesInFlightPerNamespace ?? defaultMaxPassesInFlightPerNamespace,
              holdMs: options.passHoldMs ?? defaultPassHoldMs,
              holds: (_key: string, req: ReconcileRequest) => this.startsPass(req),
            },
          }),
      onAdmitted: () => this.metrics.passesInFlight.inc(),
      onReleased: (_key, why) => {
        this.metrics.passesInFlight.dec();
        this.metrics.passSlotReleases.inc({ reason: why });
      },
      minIntervalMs: options.minSignalIntervalMs,
      retryBackoff: options.retryBackoff,
      paused: true,
      clock: this.clock,
      random: options.random,
      onAdded: (key, req) => workqueue.added(key, req),
      onTaken: (key) => workqueue.taken(key),
      onMerged: () => this.metrics.signalsMerged.inc(),
      onDelivered: (key, req) => {
        workqueue.done(key);
        this.metrics.signalsSent.inc({ reason: req.reason });
        log.debug({ workflowId: key, reason: req.reason, generation: req.generation }, 'signal delivered');
      },
      onFailed: (key, err, retryInMs) => {
        workqueue.done(key, true);
        this.metrics.signalsFailed.inc();
        log.warn({ workflowId: key, err, retryInMs }, 'signal failed; will retry');
      },
      permanent: permanentDeliveryFailure,
      onDropped: (key, req, err, reason) => {
        workqueue.done(key);
        this.metrics.signalsDropped.inc({ reason });
        log.error({ workflowId: key, err, reason, request: req }, 'signal dropped: it can never be delivered');
      },
    });
    if (options.resources.some((r) => r.referrers) && !options.operator) {
      throw new Error('the bridge watches referenced kinds: pass the operator (its references map changes to objects)');
    }
    this.owned = new OwnedEvents({
      resources: options.resources,
      primaryCache: (group, kind) => {
        const found = this.reflectors.find(
          (r) => isPrimary(r.resource) && r.resource.group === group && r.resource.kind === kind,
        );
        return found && { synced: found.reflector.synced, cache: found.reflector.cache };
      },
      requestOf: (resource, obj, reason) => this.stateOf(resource, obj, reason),
      enqueue: (request) => this.enqueue(request),
      onUnresolved: (resource, child, owner, uid) => {
        this.metrics.unresolvedOwners.inc({ resource: resourceName(resource) });
        log.debug({ child: objectKey(child), owner, uid }, 'owner reference names no cached owner; no signal');
      },
    });
    this.referenceMaps = referenceMappings(options.resources, options.operator?.reconcilers ?? []);
    this.reflectors = options.resources.map((resource) => {
      const name = resourceName(resource);
      const reflector: Reflector = new Reflector({
        kc: options.kc,
        resource,
        namespace: options.namespace,
        labelSelector: selectorFor(resource, options.labelSelector),
        log: log.child({ resource: name }),
        pageSize: options.pageSize,
        watchTimeoutSeconds: options.watchTimeoutSeconds,
        inactivityTimeoutMs: options.inactivityTimeoutMs,
        backoff: options.watchBackoff,
        clock: this.clock,
        random: options.random,
        handler: {
          onEvent: (event) => {
            this.onEvent(resource, event);
            this.metrics.cacheObjects.set({ resource: name }, reflector.cache.size);
            this.metrics.cacheBytes.set({ resource: name }, reflector.cache.estimatedBytes);
          },
          onSynced: () => {
            this.metrics.synced.set({ resource: name }, 1);
            if (isPrimary(resource)) this.owned.flush();
            if (this.ready) this.onAllSynced();
          },
          onWatchEvent: (type) => this.metrics.watchEvents.inc({ resource: name, type }),
          onList: (reason) => this.metrics.relists.inc({ resource: name, reason }),
          onWatchRestart: (reason) => this.metrics.watchRestarts.inc({ resource: name, reason }),
        },
      });
      return { resource, reflector };
    });
    const le = options.leaderElection;
    if (le) {
      this.elector = new LeaderElector({
        kc: options.kc,
        namespace: le.namespace,
        name: le.name ?? 'homeostat-informer-bridge',
        identity: le.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        log: log.child({ component: 'leader-election' }),
        clock: this.clock,
        random: options.random,
        onStartedLeading: () => this.setLeading(true),
        onStoppedLeading: () => this.setLeading(false),
      });
    }
    const queue = this.queue;
    const dirty = this.metrics.dirtyKeys;
    (dirty as unknown as { collect: () => void }).collect = () => dirty.set(queue.dirtyKeys);
    const depth = this.metrics.queueDepth;
    (depth as unknown as { collect: () => void }).collect = () => {
      depth.reset();
      for (const [namespace, n] of queue.readyByGroup()) depth.set({ namespace }, n);
    };
  }

  /** Whether every reflector has completed its first list (`/readyz`). */
  get ready(): boolean {
    return this.reflectors.every((r) => r.reflector.synced);
  }

  /** Whether the bridge is alive (`/healthz`): a leader that could not renew its Lease is not. */
  get healthy(): boolean {
    if (this.stopping || !this.elector?.isLeader) return true;
    const leaseMs = (this.opts.leaderElection && this.opts.leaderElection.leaseDurationMs) || 15_000;
    return this.clock.now() - this.elector.lastRenewal < leaseMs + 20_000;
  }

  /** Whether this replica delivers signals. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Objects with an undelivered request. */
  get dirtyKeys(): number {
    return this.queue.dirtyKeys;
  }

  /** The cache of a watched resource (by kind and group; a primary kind's cache when it is watched in several roles). */
  cacheOf(group: string, kind: string): Reflector['cache'] | undefined {
    const of = this.reflectors.filter((r) => r.resource.group === group && r.resource.kind === kind);
    return (of.find((r) => isPrimary(r.resource)) ?? of[0])?.reflector.cache;
  }

  /** Primary objects whose references are indexed (for metrics and tests). */
  get indexedReferrers(): number {
    return this.references.size;
  }

  /** Starts the reflectors, leader election (or leads at once) and the periodic resync. */
  start(): void {
    for (const r of this.reflectors) r.reflector.start();
    if (this.elector) this.elector.start();
    else this.setLeading(true);
    this.scheduleResync();
  }

  /**
   * Graceful shutdown: stops watching, flushes pending signals for up to `flushTimeoutMs` (while still
   * holding the Lease), then releases the Lease.
   * @returns whether every pending signal was delivered
   */
  async stop(flushTimeoutMs = 10_000): Promise<boolean> {
    this.stopping = true;
    this.cancelResync();
    await Promise.all(this.reflectors.map((r) => r.reflector.stop()));
    const flushed = this.leading ? await this.queue.drain(flushTimeoutMs) : this.queue.dirtyKeys === 0;
    this.queue.pause();
    this.queue.dropSlots(); // their hold timers would keep the process alive for nothing
    this.metrics.passesInFlight.set(0);
    // An audit still listing or starting workflows ends at its next step (it checks `stopping`); wait
    // for it, so that no Temporal call is in flight when the caller closes the connection (a call the
    // client retries after that throws from a timer, out of anyone's reach). The wait is bounded: a
    // call on a connection someone closed already never settles, and a stop must not hang on it.
    if (this.auditRun) {
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        this.auditRun.then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), auditStopWaitMs))),
      ]);
      clearTimeout(timer);
      if (!waited) this.opts.log.warn({ waitedMs: auditStopWaitMs }, 'bridge stopping with an audit call unfinished');
    }
    await this.elector?.stop();
    this.leading = false;
    this.metrics.isLeader.set(0);
    this.opts.log.info({ flushed, dirtyKeys: this.queue.dirtyKeys }, 'bridge stopped');
    return flushed;
  }

  /**
   * The safety net: enqueues a `resync` request for every cached primary object that is behind
   * (generation not observed in status, or deletion pending).
   * @returns how many objects were enqueued
   */
  resync(): number {
    let count = 0;
    for (const { resource, reflector } of this.reflectors) {
      if (!isPrimary(resource)) continue;
      for (const obj of reflector.cache.values()) {
        if (!isBehind(obj)) continue;
        this.enqueue(this.stateOf(resource, obj, 'resync'));
        count++;
      }
    }
    if (count) this.opts.log.info({ count }, 'resync: objects behind enqueued');
    return count;
  }

  /**
   * The other safety net ({@link auditObjectWorkflows}): starts the workflow of every cached primary
   * object that has none running. Runs with every resync and when the caches first sync.
   * @returns how many workflows were started
   */
  async auditWorkflows(): Promise<number> {
    if (this.auditing) return 0;
    this.auditing = true;
    try {
      const started = await auditObjectWorkflows({
        client: this.opts.client,
        taskQueue: this.opts.taskQueue,
        deliveryTimeoutMs: this.opts.deliveryTimeoutMs,
        ...(this.opts.fairnessWeights !== undefined ? { fairnessWeights: this.opts.fairnessWeights } : {}),
        primaries: this.reflectors
          .filter((r) => isPrimary(r.resource))
          .map(({ resource, reflector }) => ({ resource, objects: () => reflector.cache.values() })),
        requestOf: (resource, obj) => this.stateOf(resource, obj, 'resync'),
        pending: (workflowId) => this.queue.isDirty(workflowId),
        stopping: () => this.stopping,
        leading: () => this.leading,
        log: this.opts.log,
        onDropped: (reason) => this.metrics.signalsDropped.inc({ reason }),
      });
      this.metrics.audits.inc({ result: 'ok' });
      this.metrics.auditStarts.inc(started);
      return started;
    } catch (err) {
      this.metrics.audits.inc({ result: 'failed' });
      throw err;
    } finally {
      this.auditing = false;
    }
  }

  /** Runs {@link auditWorkflows} in the background; a failure is logged and the next resync tries again. */
  private audit(): void {
    if (this.opts.auditWorkflows === false || this.auditRun) return;
    this.auditRun = this.auditWorkflows()
      .then(() => undefined)
      .catch((err: unknown) => this.opts.log.warn({ err }, 'audit of object workflows failed'))
      .finally(() => {
        this.auditRun = undefined;
      });
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.metrics.isLeader.set(leading ? 1 : 0);
    if (!leading) {
      this.queue.pause();
      return;
    }
    // A new leader checks both safety nets at once, as the first sync does: after a takeover (the
    // old leader killed) the caches synced before this replica led, and the next resync is minutes away.
    if (this.ready) {
      this.resync();
      this.audit();
    }
    this.queue.resume();
  }

  private onAllSynced(): void {
    this.opts.log.info('all resources synced');
    if (this.leading) {
      this.resync();
      this.audit();
    }
  }

  private scheduleResync(): void {
    const every = this.opts.resyncIntervalMs ?? 300_000;
    this.cancelResync = this.clock.setTimeout(() => {
      if (this.stopping) return;
      if (this.leading && this.ready) {
        this.resync();
        this.audit();
      }
      this.scheduleResync();
    }, every);
  }

  private stateOf(resource: WatchedResource, obj: KubeObject, reason: ReconcileReason): ReconcileRequest {
    const ref: ObjectRef = {
      group: resource.group,
      version: resource.version,
      kind: resource.kind,
      namespace: resource.namespaced ? (obj.metadata.namespace ?? '') : '',
      name: obj.metadata.name ?? '',
    };
    return {
      ref,
      uid: obj.metadata.uid ?? '',
      generation: obj.metadata.generation ?? 0,
      resourceVersion: obj.metadata.resourceVersion ?? '',
      reason,
    };
  }

  /**
   * Whether delivering `req` starts a pass that holds an admission slot: its object is cached and
   * behind (a generation not yet observed, or a deletion pending). A request for an object already in
   * line (a child's change, a referenced object's) runs a pass too, but nothing in the object shows
   * when it ends: it waits for a free slot and takes none.
   */
  private startsPass(req: ReconcileRequest): boolean {
    if (req.reason === 'deleted') return false;
    const { namespace, name } = req.ref;
    const cached = this.cacheOf(req.ref.group, req.ref.kind)?.get(objectKey({ metadata: { namespace, name } }));
    return cached !== undefined && isBehind(cached);
  }

  /** A primary object's event frees its pass's slot once the object is in line again, or gone. */
  private releaseIfDone(resource: WatchedResource, event: ReflectorEvent): void {
    if (this.queue.slotsHeld === 0) return;
    if (event.type !== 'deleted' && isBehind(event.object)) return;
    this.queue.release(workflowIdFor(this.stateOf(resource, event.object, 'updated').ref));
  }

  private enqueue(request: ReconcileRequest): void {
    this.queue.add(workflowIdFor(request.ref), request);
  }

  private onEvent(resource: WatchedResource, event: ReflectorEvent): void {
    if (isPrimary(resource)) {
      this.indexReferences(resource, event); // replays too: the first list fills the index
      if (!event.replay) {
        this.releaseIfDone(resource, event);
        this.onPrimaryEvent(resource, event);
      }
      return;
    }
    if (event.replay) return; // the first list fills the cache; the safety net decides what is behind
    if (resource.owners) this.owned.onEvent(resource, event);
    if (resource.referrers) this.onReferencedEvent(resource, event);
  }

  private onPrimaryEvent(resource: WatchedResource, event: ReflectorEvent): void {
    if (event.type === 'added') this.enqueue(this.stateOf(resource, event.object, 'added'));
    else if (event.type === 'deleted') {
      const last = event.object;
      const gen = last.metadata.generation ?? event.previous?.metadata.generation ?? 0;
      this.enqueue({ ...this.stateOf(resource, last, 'deleted'), generation: gen });
    } else if (event.previous) {
      const rule = relevantChange(resource, event.previous, event.object);
      if (rule) this.enqueue(this.stateOf(resource, event.object, rule === 'uid' ? 'added' : 'updated'));
    }
  }

  /** Keeps the reference index in line with a primary object's `referencedBy` results. */
  private indexReferences(resource: WatchedResource, event: ReflectorEvent): void {
    const mappings = this.referenceMaps.get(`${resource.group}/${resource.kind}`);
    if (!mappings) return;
    const key = objectKey(event.object);
    const id = `${resource.group}/${resource.kind}|${key}`;
    if (event.type === 'deleted') {
      this.references.delete(id);
      return;
    }
    const targets = referencedKeys(event.object, resource.namespaced, mappings, (err, referenced) =>
      this.opts.log.warn(
        { err, kind: resource.kind, object: key, referencedKind: referenced.kind },
        'referencedBy failed; the object is not re-reconciled when what it references changes',
      ),
    );
    this.references.set(id, targets, { resource, key });
  }

  /** A referenced object changed (added, deleted, or a new resourceVersion): signal every referrer. */
  private onReferencedEvent(resource: WatchedResource, event: ReflectorEvent): void {
    const { namespace, name } = event.object.metadata;
    const target = referenceKey(
      resource.group,
      resource.kind,
      resource.namespaced ? (namespace ?? '') : '',
      name ?? '',
    );
    for (const { resource: primary, key } of this.references.referrersOf(target)) {
      const cached = this.cacheOf(primary.group, primary.kind)?.get(key);
      if (cached) this.enqueue(this.stateOf(primary, cached, 'referenced-changed'));
    }
  }
}
