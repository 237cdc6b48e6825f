/**
 * Local verification of bearer tokens before any TokenReview: a JWT is checked in-process against the
 * keys its issuer publishes (the cluster's ServiceAccount issuer, and OIDC issuers named by
 * configuration) — algorithm, issuer, audience, lifetime, signature — so a malformed, unsigned,
 * forged, foreign, misdirected or expired token is refused without costing the API server anything.
 * A token that passes still goes to TokenReview, which alone knows about revocation (a deleted
 * ServiceAccount, Pod or Secret the token is bound to).
 */
import { checkAlgorithm, checkClaims, decodeJwt, verifySignature, type TokenRefusal } from './jwt';
import type { IssuerKeys } from './issuer-keys';

/**
 * What local verification says of a token: `verified` (signed by a trusted issuer, for us, in its
 * lifetime), `refused` (with why), or `unverified` — only a TokenReview can tell: an opaque token
 * when those may be reviewed, or a JWT while its issuer's keys cannot be fetched.
 */
export type TokenVerdict =
  | { readonly verdict: 'verified'; readonly issuer: string }
  | { readonly verdict: 'refused'; readonly reason: TokenRefusal }
  | { readonly verdict: 'unverified'; readonly reason: 'opaque' | 'keys-unavailable' };

/** Options of {@link TokenVerifier}. */
export interface TokenVerifierOptions {
  /** The trusted issuers' keys. */
  readonly issuers: readonly IssuerKeys[];
  /** `aud` must include one of these; empty: any (TokenReview then checks the API server's own). */
  readonly audiences: readonly string[];
  /** Non-JWT tokens go to TokenReview (`unverified`) rather than being refused. @default false */
  readonly reviewOpaqueTokens?: boolean;
  /** Clock skew allowed on `exp` and `nbf`, as the API server allows. @default 60 */
  readonly skewSeconds?: number;
  readonly now?: () => number;
}

const refused = (reason: TokenRefusal): TokenVerdict => ({ verdict: 'refused', reason });

/** Verifies bearer tokens against the trusted issuers' published keys. */
export class TokenVerifier {
  private readonly now: () => number;

  constructor(private readonly options: TokenVerifierOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The verdict on `token`; never throws. */
  async verify(token: string): Promise<TokenVerdict> {
    const jwt = decodeJwt(token);
    if (jwt === 'opaque') {
      return this.options.reviewOpaqueTokens ? { verdict: 'unverified', reason: 'opaque' } : refused('opaque');
    }
    if (jwt === 'malformed') return refused(jwt);
    const bad = checkAlgorithm(jwt.header.alg);
    if (bad) return refused(bad);
    await Promise.all(this.options.issuers.map((i) => i.ready()));
    const issuer = this.options.issuers.find((i) => i.issuer !== undefined && i.issuer === jwt.claims.iss);
    if (!issuer) {
      // An issuer whose keys were never fetched might be the token's: only a TokenReview can tell.
      return this.options.issuers.some((i) => i.issuer === undefined)
        ? { verdict: 'unverified', reason: 'keys-unavailable' }
        : refused('unknown-issuer');
    }
    // The claims before the keys: an expired or misdirected token never makes us fetch keys.
    const claims = checkClaims(jwt.claims, {
      issuers: new Set([issuer.issuer!]),
      audiences: this.options.audiences,
      nowSeconds: Math.floor(this.now() / 1000),
      skewSeconds: this.options.skewSeconds ?? 60,
    });
    if (claims) return refused(claims);
    const keys = await issuer.keysFor(jwt.header.kid);
    if (keys.length === 0) return refused('unknown-key');
    return keys.some((k) => verifySignature(jwt, k.key, k.alg))
      ? { verdict: 'verified', issuer: issuer.issuer! }
      : refused('bad-signature');
  }
}
