/**
 * A bounded cache of answers, each kept for a lifetime of its own: the least recently used goes first
 * when it is full, an expired answer is never returned. Holds TokenReview and SubjectAccessReview
 * answers.
 */

/** Options of {@link ExpiringCache}. */
export interface ExpiringCacheOptions {
  /** Entries kept at most. @default 10_000 */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

/** An LRU map whose entries expire. */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private readonly now: () => number;

  constructor(private readonly options: ExpiringCacheOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** The answer for `key`, unless absent or expired. */
  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (this.now() >= hit.until) return undefined;
    this.entries.set(key, hit);
    return hit.value;
  }

  /** Keeps `value` for `ttlMs` (not at all when it is 0 or less). */
  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (ttlMs <= 0) return;
    this.entries.set(key, { value, until: this.now() + ttlMs });
    const max = this.options.maxEntries ?? 10_000;
    while (this.entries.size > max) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Entries held (expired ones included until they are read or pushed out). */
  get size(): number {
    return this.entries.size;
  }
}
