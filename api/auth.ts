/**
 * Authentication and authorization with Kubernetes itself: a bearer token is verified locally against
 * its issuer's published keys (`token-verifier.ts`) and then checked by TokenReview (or, for local use
 * and only when configured, against a static token list), and every action is allowed only if a
 * SubjectAccessReview for the caller allows the matching verb on the object's resource in its
 * namespace (`access-reviews.ts`) — so the platform's RBAC decides.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { AccessReviews } from './access-reviews';
import type { AccessRequest, Caller } from './caller';
import { ExpiringCache } from './expiring-cache';
import { IssuerKeys, type IssuerKeysOptions } from './issuer-keys';
import { kubernetesIssuer, oidcIssuer } from './issuer-sources';
import type { TokenRefusal } from './jwt';
import { TokenVerifier, type TokenVerdict } from './token-verifier';

export type { AccessRequest, Caller } from './caller';
export type { TokenVerdict } from './token-verifier';

/** A static token (local use only). */
export interface StaticToken {
  readonly token: string;
  readonly user: string;
  readonly groups: readonly string[];
}

/** Options of {@link KubernetesAuth}. */
export interface KubernetesAuthOptions {
  readonly kc: k8s.KubeConfig;
  /** Tokens accepted without TokenReview. @default none */
  readonly staticTokens?: readonly StaticToken[];
  /**
   * Audiences a token must be meant for (TokenReview `audiences`): a token minted for another service
   * is refused. Empty: the API server's own audiences (any token the cluster accepts). @default ['homeostat']
   */
  readonly audiences?: readonly string[];
  /** How long a TokenReview answer, valid or not, is reused. @default 10_000 */
  readonly cacheMs?: number;
  /** Answers kept at most (TokenReview and SubjectAccessReview each); the least recently used goes first. @default 10_000 */
  readonly maxCacheEntries?: number;
  /**
   * OIDC issuers (besides the cluster's ServiceAccount issuer) whose JWTs are verified locally and
   * then reviewed; a JWT of any other issuer is refused without a TokenReview. @default none
   */
  readonly oidcIssuers?: readonly string[];
  /**
   * Send opaque (non-JWT) tokens to TokenReview (for a webhook token authenticator), under the
   * per-address failure budget; otherwise they are refused without one. @default false
   */
  readonly reviewOpaqueTokens?: boolean;
  /** How long an allowed SubjectAccessReview answer is reused (0: not cached). @default 30_000 */
  readonly allowedCacheMs?: number;
  /** How long a denied SubjectAccessReview answer is reused (0: not cached). @default 5_000 */
  readonly deniedCacheMs?: number;
  /** Replaces local verification (tests). @default the cluster's ServiceAccount issuer and `oidcIssuers` */
  readonly verifier?: Pick<TokenVerifier, 'verify'>;
  /** Told when an issuer's keys cannot be fetched. */
  readonly onKeysError?: (issuer: string, err: unknown) => void;
  readonly now?: () => number;
}

/** Counts of what authentication and authorization did, for metrics and tests. */
export interface AuthCounts {
  /** TokenReviews sent to the API server. */
  readonly tokenReviews: number;
  /** Tokens refused by local verification, by reason. */
  readonly refusals: Readonly<Partial<Record<TokenRefusal, number>>>;
  /** SubjectAccessReviews sent to the API server. */
  readonly accessReviews: number;
  /** Authorization answers taken from the cache. */
  readonly accessCacheHits: number;
}

/**
 * What the API's requests use of {@link KubernetesAuth}. A stand-in with only `authenticate` and
 * `authorize` (tests) has every token judged by `authenticate`, under the failure budget.
 */
export type ApiAuth = Pick<KubernetesAuth, 'authenticate' | 'authorize'> &
  Partial<Pick<KubernetesAuth, 'known' | 'check' | 'review' | 'counts'>>;

/** The audience a token must be minted for by default: `kubectl create token <sa> --audience homeostat`. */
export const defaultAudiences: readonly string[] = ['homeostat'];

const digest = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Parses `token=user[:group,group];…` (HOMEOSTAT_API_STATIC_TOKENS). */
export function parseStaticTokens(text: string): StaticToken[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf('=');
      if (eq < 16) throw new Error('static tokens look like <token of 16+ characters>=<user>[:<group>,<group>]');
      // Only the first colon separates the user from the groups: group names such as
      // system:masters contain colons themselves.
      const identity = entry.slice(eq + 1);
      const colon = identity.indexOf(':');
      const user = colon < 0 ? identity : identity.slice(0, colon);
      const groups = colon < 0 ? '' : identity.slice(colon + 1);
      if (!user) throw new Error('a static token needs a user name');
      return { token: entry.slice(0, eq), user, groups: groups ? groups.split(',').filter(Boolean) : [] };
    });
}

/** Local verification, TokenReview and SubjectAccessReview against the cluster's API server. */
export class KubernetesAuth {
  private readonly authn: k8s.AuthenticationV1Api;
  private readonly access: AccessReviews;
  private readonly verifier: Pick<TokenVerifier, 'verify'>;
  /** TokenReview answers by token digest, valid and not (negative entries). */
  private readonly cache: ExpiringCache<{ caller: Caller | undefined }>;
  private reviews = 0;
  private readonly refusals: Partial<Record<TokenRefusal, number>> = {};

  constructor(private readonly options: KubernetesAuthOptions) {
    const now = options.now ?? Date.now;
    const max = options.maxCacheEntries ?? 10_000;
    this.authn = options.kc.makeApiClient(k8s.AuthenticationV1Api);
    this.cache = new ExpiringCache({ maxEntries: max, now });
    this.access = new AccessReviews({
      kc: options.kc,
      maxEntries: max,
      now,
      ...(options.allowedCacheMs !== undefined ? { allowedMs: options.allowedCacheMs } : {}),
      ...(options.deniedCacheMs !== undefined ? { deniedMs: options.deniedCacheMs } : {}),
    });
    const keysOf = (name: string, load: IssuerKeysOptions['load']): IssuerKeys =>
      new IssuerKeys({ load, now, onError: (err) => options.onKeysError?.(name, err) });
    this.verifier =
      options.verifier ??
      new TokenVerifier({
        issuers: [
          keysOf('the cluster', kubernetesIssuer(options.kc)),
          ...(options.oidcIssuers ?? []).map((i) => keysOf(i, oidcIssuer(i))),
        ],
        audiences: options.audiences ?? defaultAudiences,
        reviewOpaqueTokens: options.reviewOpaqueTokens ?? false,
        now,
      });
  }

  /**
   * What is known of a token without asking the API server: a static token's caller, or a cached
   * TokenReview answer (`caller` undefined: not valid). Undefined when only a TokenReview can tell.
   */
  known(token: string): { readonly caller: Caller | undefined } | undefined {
    const key = digest(token);
    for (const s of this.options.staticTokens ?? []) {
      if (timingSafeEqual(Buffer.from(digest(s.token)), Buffer.from(key))) {
        return { caller: { user: s.user, groups: s.groups } };
      }
    }
    return this.cache.get(key);
  }

  /** Local verification of `token` against its issuer's published keys; costs the API server nothing (but key fetches). */
  async check(token: string): Promise<TokenVerdict> {
    const verdict = await this.verifier.verify(token);
    if (verdict.verdict === 'refused') this.refusals[verdict.reason] = (this.refusals[verdict.reason] ?? 0) + 1;
    return verdict;
  }

  /** The caller a bearer token belongs to by TokenReview (cached, valid or not); undefined when it is not valid. */
  async review(token: string): Promise<Caller | undefined> {
    const audiences = [...(this.options.audiences ?? defaultAudiences)];
    this.reviews++;
    const review = await this.authn.createTokenReview({
      body: { spec: { token, ...(audiences.length ? { audiences } : {}) } },
    });
    const status = review.status;
    // An authenticator that honours audiences answers the ones the token is valid for; one that
    // answers none cannot say, so the token is not taken as meant for us.
    const meantForUs = audiences.length === 0 || (status?.audiences ?? []).some((a) => audiences.includes(a));
    const user = status?.authenticated && meantForUs ? status.user : undefined;
    const caller: Caller | undefined = user?.username
      ? {
          user: user.username,
          groups: user.groups ?? [],
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
        }
      : undefined;
    this.cache.set(digest(token), { caller }, this.options.cacheMs ?? 10_000);
    return caller;
  }

  /**
   * The caller a bearer token belongs to, or undefined when the token is not valid: a static or
   * cached answer, else local verification and, unless it refused the token, a TokenReview.
   */
  async authenticate(token: string): Promise<Caller | undefined> {
    const known = this.known(token);
    if (known) return known.caller;
    if ((await this.check(token)).verdict === 'refused') return undefined;
    return this.review(token);
  }

  /** TokenReview answers cached (valid and not). */
  get cachedAnswers(): number {
    return this.cache.size;
  }

  /** What was reviewed, refused and served from cache so far. */
  get counts(): AuthCounts {
    return {
      tokenReviews: this.reviews,
      refusals: { ...this.refusals },
      accessReviews: this.access.reviewsMade,
      accessCacheHits: this.access.cacheHits,
    };
  }

  /** Whether the platform's RBAC allows the caller this access (SubjectAccessReview, cached briefly). */
  authorize(caller: Caller, access: AccessRequest): Promise<boolean> {
    return this.access.allowed(caller, access);
  }
}
