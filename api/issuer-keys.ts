/**
 * The published signing keys of one token issuer (its JWKS), fetched when first needed, again when a
 * token names a key id not among them (key rotation) and periodically — every fetch rate-limited and
 * shared by the requests waiting for it, so tokens naming made-up key ids cost the issuer at most one
 * fetch per `minRefetchMs`.
 */
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { publicKeyOf } from './jwt';

/** What an issuer publishes: its name (the `iss` of its tokens) and its JWKS's keys. */
export interface IssuerDocument {
  readonly issuer: string;
  readonly keys: readonly JsonWebKey[];
}

/** A public key of the issuer, with the algorithm its JWK pins (if any). */
export interface IssuerKey {
  readonly key: KeyObject;
  readonly alg?: string;
}

/** Options of {@link IssuerKeys}. */
export interface IssuerKeysOptions {
  /** Fetches the issuer's discovery document and JWKS (see `issuer-sources.ts`). */
  readonly load: () => Promise<IssuerDocument>;
  /** Fetches (successful or not) at most once per this long, whatever the tokens ask. @default 10_000 */
  readonly minRefetchMs?: number;
  /** Keys older than this are fetched again (a key removed from the JWKS stops being trusted). @default 600_000 */
  readonly refreshMs?: number;
  /** Called when a fetch fails (the keys known before are kept). */
  readonly onError?: (err: unknown) => void;
  readonly now?: () => number;
}

/** One issuer's keys by key id. */
export class IssuerKeys {
  private byKid = new Map<string, IssuerKey[]>();
  private all: IssuerKey[] = [];
  private name: string | undefined;
  private loadedAt = -Infinity;
  private triedAt = -Infinity;
  private inflight: Promise<void> | undefined;
  private fetches = 0;
  private readonly now: () => number;

  constructor(private readonly options: IssuerKeysOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The issuer's name, once its keys were fetched. */
  get issuer(): string | undefined {
    return this.name;
  }

  /** Fetches started so far (successful or not). */
  get fetchCount(): number {
    return this.fetches;
  }

  /** Fetches the keys if never fetched or stale, unless a fetch was tried less than `minRefetchMs` ago. */
  async ready(): Promise<void> {
    if (this.now() - this.loadedAt >= (this.options.refreshMs ?? 600_000)) await this.refetch();
  }

  /**
   * The keys a token naming `kid` may be signed with: that key (fetched again, rate-limited, when
   * unknown), or every key when the token names none.
   */
  async keysFor(kid: string | undefined): Promise<readonly IssuerKey[]> {
    await this.ready();
    if (kid === undefined) return this.all;
    if (!this.byKid.has(kid)) await this.refetch();
    return this.byKid.get(kid) ?? [];
  }

  private refetch(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (this.now() - this.triedAt < (this.options.minRefetchMs ?? 10_000)) return Promise.resolve();
    this.triedAt = this.now();
    this.fetches++;
    this.inflight = this.options
      .load()
      .then((doc) => this.take(doc))
      .catch((err: unknown) => this.options.onError?.(err))
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  private take(doc: IssuerDocument): void {
    const byKid = new Map<string, IssuerKey[]>();
    const all: IssuerKey[] = [];
    for (const jwk of doc.keys) {
      const key = publicKeyOf(jwk);
      if (!key) continue;
      const entry: IssuerKey = { key, ...(typeof jwk.alg === 'string' ? { alg: jwk.alg } : {}) };
      all.push(entry);
      if (typeof jwk.kid === 'string') byKid.set(jwk.kid, [...(byKid.get(jwk.kid) ?? []), entry]);
    }
    this.name = doc.issuer;
    this.byKid = byKid;
    this.all = all;
    this.loadedAt = this.now();
  }
}
