/**
 * The per-key coalescing delivery queue (client-go's workqueue, specialised for signals): at most one
 * delivery in flight per key; items that arrive meanwhile merge into one pending item; bounded
 * concurrency overall; ready keys are taken round-robin across their groups (namespaces), weighted, so
 * one group's ten thousand keys do not queue another group's one ({@link FairReadySet}); keys of a more
 * urgent band go first ({@link CoalescingQueueOptions.bandOf}: the bridge's real changes before its
 * resyncs, as controller-runtime's priority queue does); a failed delivery is merged back and retried with per-key backoff until it
 * succeeds, unless the failure is one that can never succeed ({@link CoalescingQueueOptions.permanent}):
 * that item is dropped (reported), and what arrived for the key meanwhile is still delivered. With
 * {@link CoalescingQueueOptions.admission}, a delivery that starts work downstream (the bridge: a pass
 * for a generation the object has not yet observed) holds one of a bounded number of slots until the
 * work is seen done ({@link CoalescingQueue.release}) or a hold time passes, and no delivery starts while
 * every slot is held, nor for a group (namespace) holding its own share of them: the backlog then waits
 * here, where it is fair, instead of downstream, where it may not be. Memory is one entry per dirty key
 * or held slot, never one per event.
 */
import { Backoff, type BackoffOptions } from './backoff';
import { FairReadySet } from './fair-ready';
import { type Clock, type Random, systemClock } from './types';

/** Options of {@link CoalescingQueue}. */
export interface CoalescingQueueOptions<T> {
  /** Delivers one item; a rejection retries it (merged with newer items) after a backoff. */
  readonly deliver: (key: string, item: T) => Promise<void>;
  /** Merges a pending item with a newer one. */
  readonly merge: (older: T, newer: T) => T;
  /**
   * The group of a key (the bridge: the object's namespace), read once when the key enters the queue:
   * ready keys are taken round-robin across groups. @default every key in one group: first-in, first-out
   */
  readonly groupOf?: (key: string, item: T) => string;
  /** A group's weight: its share of deliveries while several groups wait (more than 0). @default 1 */
  readonly weightOf?: (group: string) => number;
  /**
   * The band of a pending item: ready keys of band 0 are delivered before any of band 1 (each band
   * fair across groups on its own). Read whenever the key becomes ready and when a merge makes its
   * pending item more urgent (it then moves up at once). @default every item in band 0
   */
  readonly bandOf?: (item: T) => 0 | 1;
  /** Deliveries in flight at most. @default 16 */
  readonly concurrency?: number;
  /**
   * Least time between two deliveries for one key: a burst of changes to one object becomes about one
   * signal per interval, and the first change of a quiet object is still delivered at once.
   * @default 500
   */
  readonly minIntervalMs?: number;
  /**
   * Why a delivery's failure can never succeed (a reason, for metrics), or `undefined` to retry it. An
   * item that failed permanently is dropped, not retried. @default every failure is retried
   */
  readonly permanent?: (err: unknown) => string | undefined;
  /** Per-key retry backoff. @default 500 ms doubling to 5 s, jitter 0.2 */
  readonly retryBackoff?: BackoffOptions;
  /** Whether delivery starts paused (a standby replica). @default false */
  readonly paused?: boolean;
  /** @default the system clock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: Random;
  /** Bounds the work in flight downstream ({@link AdmissionOptions}). @default no bound */
  readonly admission?: AdmissionOptions<T>;
  /** Observability: a key took a slot ({@link AdmissionOptions}). */
  readonly onAdmitted?: (key: string) => void;
  /** Observability: a key's slot was freed. */
  readonly onReleased?: (key: string, why: SlotRelease) => void;
  /** Observability: a key got a pending item (a new one, or a failed delivery's item put back). */
  readonly onAdded?: (key: string, item: T) => void;
  /** Observability: an item merged into the key's pending one. */
  readonly onMerged?: (key: string) => void;
  /** Observability: a key's pending item was taken for delivery. */
  readonly onTaken?: (key: string, item: T) => void;
  /** Observability: a delivery succeeded. */
  readonly onDelivered?: (key: string, item: T) => void;
  /** Observability: a delivery failed and is retried after `retryInMs`. */
  readonly onFailed?: (key: string, err: unknown, retryInMs: number) => void;
  /** An item dropped after a failure that cannot succeed (`reason` from {@link CoalescingQueueOptions.permanent}). */
  readonly onDropped?: (key: string, item: T, err: unknown, reason: string) => void;
}

/** Options of {@link CoalescingQueue}'s admission: how much delivered work may be in flight downstream. */
export interface AdmissionOptions<T> {
  /** Slots: deliveries whose work is not yet seen done, at most. No delivery starts while all are held. */
  readonly limit: number;
  /**
   * A slot is freed after this long even if the work was not seen done (it waits on something else by
   * then: a retry's backoff, a slow external call, a worker that is down).
   */
  readonly holdMs: number;
  /**
   * Slots one group (the bridge: a namespace) may hold at once; while it holds that many, its keys wait
   * and other groups' keys are delivered. @default {@link limit}
   */
  readonly perGroupLimit?: number;
  /** Whether delivering `item` starts work that holds a slot (read when the key is taken for delivery). */
  readonly holds: (key: string, item: T) => boolean;
}

/** Why a slot was freed: the work was seen done, the hold time passed, or the delivery failed. */
export type SlotRelease = 'done' | 'timeout' | 'failed';

interface Entry<T> {
  readonly group: string;
  pending: T | undefined;
  /** The band whose ready set holds the key, while it waits for a slot (a copy left in a lower band is stale). */
  readyIn: 0 | 1 | undefined;
  inFlight: boolean;
  /** Cancels the timer of a retry backoff or of the post-delivery interval, while one runs. */
  timer: (() => void) | undefined;
  backoff: Backoff | undefined;
  /** Whether the key holds an admission slot. */
  slot: boolean;
  /** Frees the slot when its hold time passes (set once the delivery succeeded). */
  slotTimer: (() => void) | undefined;
}

/** A coalescing queue of items by key. */
export class CoalescingQueue<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /** Keys with a pending item, not in flight and not waiting for a retry, in fair order: one set per band. */
  private readonly ready: [FairReadySet, FairReadySet];
  private active = 0;
  private slots = 0;
  /** Slots held by group (groups holding none are left out). */
  private readonly groupSlots = new Map<string, number>();
  private isPaused: boolean;
  private idleWaiters: (() => void)[] = [];
  private readonly opts: CoalescingQueueOptions<T>;
  private readonly clock: Clock;

  constructor(options: CoalescingQueueOptions<T>) {
    this.opts = options;
    this.clock = options.clock ?? systemClock;
    this.isPaused = options.paused ?? false;
    this.ready = [new FairReadySet(options.weightOf), new FairReadySet(options.weightOf)];
  }

  /** Keys with an undelivered item (pending or in flight). */
  get dirtyKeys(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.pending !== undefined || e.inFlight) n++;
    return n;
  }

  /** Deliveries in flight. */
  get inFlight(): number {
    return this.active;
  }

  /** Admission slots held: delivered work not yet seen done ({@link CoalescingQueueOptions.admission}). */
  get slotsHeld(): number {
    return this.slots;
  }

  /** Whether `key` holds an admission slot. */
  holding(key: string): boolean {
    return this.entries.get(key)?.slot === true;
  }

  /**
   * The work `key`'s delivery started is done: frees its admission slot (if it holds one) and starts
   * the deliveries that waited for it.
   * @returns whether a slot was freed
   */
  release(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry?.slot) return false;
    this.freeSlot(key, entry, 'done');
    this.forgetIfIdle(key, entry);
    this.pump();
    return true;
  }

  private takeSlot(key: string, entry: Entry<T>): void {
    entry.slot = true;
    this.slots++;
    const held = (this.groupSlots.get(entry.group) ?? 0) + 1;
    this.groupSlots.set(entry.group, held);
    if (held >= this.perGroupLimit) for (const set of this.ready) set.block(entry.group);
    this.opts.onAdmitted?.(key);
  }

  /**
   * Frees every held slot without reporting it (a stopping bridge: no pass it started is waited for any
   * more, and no hold timer keeps the process alive).
   * @returns how many were freed
   */
  dropSlots(): number {
    let n = 0;
    for (const [key, entry] of this.entries) {
      if (!entry.slot) continue;
      entry.slotTimer?.();
      entry.slotTimer = undefined;
      entry.slot = false;
      n++;
      this.forgetIfIdle(key, entry);
    }
    this.slots = 0;
    this.groupSlots.clear();
    for (const set of this.ready) set.unblockAll();
    return n;
  }

  private freeSlot(key: string, entry: Entry<T>, why: SlotRelease): void {
    entry.slotTimer?.();
    entry.slotTimer = undefined;
    entry.slot = false;
    this.slots--;
    const held = (this.groupSlots.get(entry.group) ?? 1) - 1;
    if (held > 0) this.groupSlots.set(entry.group, held);
    else this.groupSlots.delete(entry.group);
    if (held < this.perGroupLimit) for (const set of this.ready) set.unblock(entry.group);
    this.opts.onReleased?.(key, why);
  }

  private get perGroupLimit(): number {
    const a = this.opts.admission;
    return a ? (a.perGroupLimit ?? a.limit) : Infinity;
  }

  /** Forgets a key with nothing pending, in flight, timed or held. */
  private forgetIfIdle(key: string, entry: Entry<T>): void {
    if (
      entry.pending === undefined &&
      !entry.inFlight &&
      !entry.timer &&
      !entry.slot &&
      this.entries.get(key) === entry
    )
      this.entries.delete(key);
  }

  /** Keys waiting for a delivery slot, by group (groups with none are left out). */
  readyByGroup(): Map<string, number> {
    const depths = new Map<string, number>();
    for (const set of this.ready)
      for (const [group, n] of set.depths()) depths.set(group, (depths.get(group) ?? 0) + n);
    return depths;
  }

  /** Whether delivery is paused. */
  get paused(): boolean {
    return this.isPaused;
  }

  /** Whether `key` has an undelivered item (pending or in flight). */
  isDirty(key: string): boolean {
    const e = this.entries.get(key);
    return e !== undefined && (e.pending !== undefined || e.inFlight);
  }

  /** The pending (not yet in flight) item of `key`, if any. */
  peek(key: string): T | undefined {
    return this.entries.get(key)?.pending;
  }

  /** Adds an item; merges it into the key's pending item if there is one. */
  add(key: string, item: T): void {
    let entry = this.entries.get(key);
    if (!entry) {
      const group = this.opts.groupOf?.(key, item) ?? '';
      entry = {
        group,
        pending: undefined,
        readyIn: undefined,
        inFlight: false,
        timer: undefined,
        backoff: undefined,
        slot: false,
        slotTimer: undefined,
      };
      this.entries.set(key, entry);
    }
    if (entry.pending !== undefined) {
      entry.pending = this.opts.merge(entry.pending, item);
      this.opts.onMerged?.(key);
    } else {
      entry.pending = item;
      this.opts.onAdded?.(key, item);
    }
    if (!entry.inFlight && !entry.timer) this.markReady(key, entry);
    this.pump();
  }

  /**
   * Puts a key with a pending item in the ready set of its band; a key already waiting in a lower band
   * moves up (its copy there is skipped when taken).
   */
  private markReady(key: string, entry: Entry<T>): void {
    const band = entry.pending === undefined ? 0 : (this.opts.bandOf?.(entry.pending) ?? 0);
    if (entry.readyIn !== undefined && entry.readyIn <= band) return;
    entry.readyIn = band;
    this.ready[band].add(key, entry.group);
  }

  /** Stops starting deliveries (in-flight ones finish); items keep merging. */
  pause(): void {
    this.isPaused = true;
  }

  /** Starts delivering again. */
  resume(): void {
    this.isPaused = false;
    this.pump();
  }

  /**
   * Resolves when nothing is dirty, or after `timeoutMs`; retries waiting for their backoff are
   * started at once (a graceful shutdown's flush).
   * @returns whether the queue emptied
   */
  async drain(timeoutMs: number): Promise<boolean> {
    for (const [key, entry] of this.entries) {
      if (entry.timer) {
        entry.timer();
        entry.timer = undefined;
        if (entry.pending !== undefined) this.markReady(key, entry);
        else this.forgetIfIdle(key, entry);
      }
    }
    this.pump();
    if (this.dirtyKeys === 0) return true;
    return new Promise<boolean>((resolve) => {
      const cancel = this.clock.setTimeout(() => resolve(this.dirtyKeys === 0), timeoutMs);
      this.idleWaiters.push(() => {
        cancel();
        resolve(true);
      });
    });
  }

  private pump(): void {
    const limit = this.opts.concurrency ?? 16;
    const admission = this.opts.admission;
    while (!this.isPaused && this.active < limit) {
      // Every slot held: nothing starts until work is seen done or a hold time passes.
      if (admission && this.slots >= admission.limit) break;
      // Keys of a group holding its share of slots are passed over (blocked in the ready sets).
      const band = this.ready[0].available ? 0 : this.ready[1].available ? 1 : undefined;
      if (band === undefined) break;
      const key = this.ready[band].take()!;
      const entry = this.entries.get(key);
      // A copy left behind when the key moved up a band, or a key no longer waiting: skip it.
      if (entry?.pending === undefined || entry.readyIn !== band) continue;
      entry.readyIn = undefined;
      const item = entry.pending;
      entry.pending = undefined;
      entry.inFlight = true;
      this.active++;
      if (admission && !entry.slot && admission.holds(key, item)) this.takeSlot(key, entry);
      this.opts.onTaken?.(key, item);
      void this.deliver(key, entry, item);
    }
  }

  private async deliver(key: string, entry: Entry<T>, item: T): Promise<void> {
    let waitMs: number;
    try {
      await this.opts.deliver(key, item);
      if (entry.slot) {
        // Held until the work is seen done (release) or for the hold time; a later delivery for the
        // key keeps the slot and starts the hold time again.
        entry.slotTimer?.();
        entry.slotTimer = this.clock.setTimeout(() => {
          entry.slotTimer = undefined;
          if (!entry.slot) return;
          this.freeSlot(key, entry, 'timeout');
          this.forgetIfIdle(key, entry);
          this.pump();
        }, this.opts.admission!.holdMs);
      }
      entry.backoff?.reset();
      this.opts.onDelivered?.(key, item);
      waitMs = this.opts.minIntervalMs ?? 500;
    } catch (err) {
      if (entry.slot) this.freeSlot(key, entry, 'failed'); // nothing started downstream
      const dropped = this.opts.permanent?.(err);
      if (dropped !== undefined) {
        // Never retried: what arrived for the key meanwhile (pending) is still delivered after the interval.
        entry.backoff?.reset();
        this.opts.onDropped?.(key, item, err, dropped);
        return this.settle(key, entry, this.opts.minIntervalMs ?? 500);
      }
      if (entry.pending === undefined) this.opts.onAdded?.(key, item);
      entry.pending = entry.pending !== undefined ? this.opts.merge(item, entry.pending) : item;
      entry.backoff ??= new Backoff({
        initialMs: 500,
        maxMs: 5_000,
        clock: this.clock,
        random: this.opts.random,
        ...this.opts.retryBackoff,
      });
      waitMs = entry.backoff.next();
      this.opts.onFailed?.(key, err, waitMs);
    }
    this.settle(key, entry, waitMs);
  }

  /** A delivery ended: the key waits `waitMs` (interval or backoff) before its next one. */
  private settle(key: string, entry: Entry<T>, waitMs: number): void {
    entry.inFlight = false;
    this.active--;
    if (this.active === 0) for (const set of this.ready) set.reset(); // nothing in flight or ready: no turns to remember
    if (waitMs > 0) {
      entry.timer = this.clock.setTimeout(() => this.wake(key, entry), waitMs);
    } else {
      this.wake(key, entry);
    }
    this.pump();
    this.notifyIdle();
  }

  /** The key's timer ended (or there was none): deliver what is pending, or forget the key. */
  private wake(key: string, entry: Entry<T>): void {
    entry.timer = undefined;
    if (entry.pending !== undefined) this.markReady(key, entry);
    else this.forgetIfIdle(key, entry);
    this.pump();
  }

  private notifyIdle(): void {
    if (this.idleWaiters.length === 0 || this.dirtyKeys !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
