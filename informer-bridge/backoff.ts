/**
 * Exponential backoff with jitter that resets after a stable period, as client-go's reflector uses
 * (`wait.NewExponentialBackoffManager`: 800 ms doubling to 30 s, reset after 2 min of no failure).
 */
import { type Clock, type Random, systemClock } from './types';

/** Options of {@link Backoff}. */
export interface BackoffOptions {
  /** First delay. @default 800 */
  readonly initialMs?: number;
  /** Largest delay (before jitter). @default 30_000 */
  readonly maxMs?: number;
  /** Multiplier per failure. @default 2 */
  readonly factor?: number;
  /** Jitter as a fraction of the delay, added uniformly in [0, jitter·delay). @default 0.2 */
  readonly jitter?: number;
  /**
   * After this long without a failure since the last one, the next delay starts from `initialMs`
   * again. @default 120_000
   */
  readonly resetAfterMs?: number;
  /** @default the system clock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: Random;
}

/** A backoff sequence; call {@link Backoff.next} on each failure and {@link Backoff.reset} on success. */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly random: Random;
  private failures = 0;
  private lastFailureAt: number | undefined;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 0.2;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  /** Failures counted since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const now = this.clock.now();
    if (this.lastFailureAt !== undefined && now - this.lastFailureAt >= this.resetAfterMs) this.failures = 0;
    this.lastFailureAt = now;
    const base = Math.min(this.maxMs, this.initialMs * Math.pow(this.factor, this.failures));
    this.failures++;
    return Math.round(base + base * this.jitter * this.random());
  }

  /** Starts over from `initialMs` (after a success that proved the connection healthy). */
  reset(): void {
    this.failures = 0;
    this.lastFailureAt = undefined;
  }
}
