/**
 * A budget of failed TokenReviews per client address, for the tokens local verification cannot judge
 * (opaque tokens when they may be reviewed, JWTs while their issuer's keys are unavailable): made-up
 * ones cost the API server a TokenReview only until the address's budget for the minute is gone, then
 * get 429 without one. Tokens verified or refused locally never touch it.
 */

/** Options of {@link AuthFailureLimiter}. */
export interface AuthFailureLimiterOptions {
  /** Failed authentications one address may make per window. */
  readonly perWindow: number;
  /** @default 60_000 */
  readonly windowMs?: number;
  /** Addresses tracked at most; the oldest window goes first. @default 10_000 */
  readonly maxAddresses?: number;
  readonly now?: () => number;
}

/** Counts failed authentications per client address in fixed windows. */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();
  private readonly now: () => number;
  private readonly windowMs: number;

  constructor(private readonly options: AuthFailureLimiterOptions) {
    this.now = options.now ?? Date.now;
    this.windowMs = options.windowMs ?? 60_000;
  }

  private current(address: string): { start: number; failures: number } | undefined {
    const w = this.windows.get(address);
    if (w && this.now() - w.start >= this.windowMs) {
      this.windows.delete(address);
      return undefined;
    }
    return w;
  }

  /** Milliseconds until `address` may try again, or 0 when it still has budget. */
  retryAfterMs(address: string): number {
    const w = this.current(address);
    if (!w || w.failures < this.options.perWindow) return 0;
    return Math.max(1, w.start + this.windowMs - this.now());
  }

  /** Records a failed authentication from `address`. */
  fail(address: string): void {
    const w = this.current(address);
    if (w) {
      w.failures++;
      return;
    }
    this.windows.set(address, { start: this.now(), failures: 1 });
    const max = this.options.maxAddresses ?? 10_000;
    while (this.windows.size > max) this.windows.delete(this.windows.keys().next().value as string);
  }
}
