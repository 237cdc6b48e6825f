/**
 * SubjectAccessReview with a short cache, as the API server's webhook authorizer keeps one (allowed
 * 5 min, denied 30 s there; shorter here by default): an answer is reused for the same caller (user,
 * groups, uid, extra) asking the same access (verb, group, resource, namespace, name) — allowed for
 * `allowedMs`, denied for `deniedMs` — and identical reviews in flight are made once. The lifetimes
 * are how long a revoked permission may still be honoured, or a new one still refused.
 */
import { createHash } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type { AccessRequest, Caller } from './caller';
import { ExpiringCache } from './expiring-cache';

/** Options of {@link AccessReviews}. */
export interface AccessReviewsOptions {
  /** The API server to ask (unused with `send`). */
  readonly kc?: k8s.KubeConfig;
  /** How long an allowed answer is reused (0: not cached). @default 30_000 */
  readonly allowedMs?: number;
  /** How long a denied answer is reused (0: not cached). @default 5_000 */
  readonly deniedMs?: number;
  /** Answers kept at most; the least recently used goes first. @default 10_000 */
  readonly maxEntries?: number;
  /** Replaces the SubjectAccessReview call (unit tests of the cache). @default a SubjectAccessReview through `kc` */
  readonly send?: (spec: k8s.V1SubjectAccessReviewSpec) => Promise<boolean>;
  readonly now?: () => number;
}

/** The caller and access as the SubjectAccessReview spec carries them, in a fixed order. */
function specOf(caller: Caller, access: AccessRequest): k8s.V1SubjectAccessReviewSpec {
  return {
    user: caller.user,
    groups: [...caller.groups],
    ...(caller.uid ? { uid: caller.uid } : {}),
    ...(caller.extra
      ? {
          extra: Object.fromEntries(
            Object.keys(caller.extra)
              .sort()
              .map((k) => [k, [...caller.extra![k]!]]),
          ),
        }
      : {}),
    resourceAttributes: {
      verb: access.verb,
      group: access.group,
      resource: access.resource,
      ...(access.namespace ? { namespace: access.namespace } : {}),
      ...(access.name ? { name: access.name } : {}),
    },
  };
}

const sendThrough =
  (authz: k8s.AuthorizationV1Api) =>
  async (spec: k8s.V1SubjectAccessReviewSpec): Promise<boolean> =>
    (await authz.createSubjectAccessReview({ body: { spec } })).status?.allowed === true;

/** SubjectAccessReviews, cached briefly. */
export class AccessReviews {
  private readonly send: (spec: k8s.V1SubjectAccessReviewSpec) => Promise<boolean>;
  private readonly cache: ExpiringCache<boolean>;
  private readonly inflight = new Map<string, Promise<boolean>>();
  private made = 0;
  private hits = 0;

  constructor(private readonly options: AccessReviewsOptions) {
    this.send = options.send ?? sendThrough((options.kc ?? new k8s.KubeConfig()).makeApiClient(k8s.AuthorizationV1Api));
    this.cache = new ExpiringCache({
      ...(options.maxEntries !== undefined ? { maxEntries: options.maxEntries } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  }

  /** SubjectAccessReviews sent to the API server so far. */
  get reviewsMade(): number {
    return this.made;
  }

  /** Answers served from the cache (or from an identical review in flight) so far. */
  get cacheHits(): number {
    return this.hits;
  }

  /** Whether the platform's RBAC allows `caller` this access. */
  async allowed(caller: Caller, access: AccessRequest): Promise<boolean> {
    const spec = specOf(caller, access);
    // The whole spec, serialized in a fixed order, is the key: nothing of the caller is left out.
    const key = createHash('sha256').update(JSON.stringify(spec)).digest('base64url');
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    const pending = this.inflight.get(key);
    if (pending) {
      this.hits++;
      return pending;
    }
    const review = this.review(spec).then((allowed) => {
      this.cache.set(key, allowed, allowed ? (this.options.allowedMs ?? 30_000) : (this.options.deniedMs ?? 5_000));
      return allowed;
    });
    this.inflight.set(key, review);
    try {
      return await review;
    } finally {
      this.inflight.delete(key);
    }
  }

  private review(spec: k8s.V1SubjectAccessReviewSpec): Promise<boolean> {
    this.made++;
    return this.send(spec);
  }
}
