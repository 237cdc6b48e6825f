/**
 * Authentication and authorization with Kubernetes itself: a bearer token is checked by TokenReview
 * (or, for local use and only when configured, against a static token list), and every action is
 * allowed only if a SubjectAccessReview for the caller allows the matching verb on the object's
 * resource in its namespace — so the platform's RBAC decides.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';

/** Who called. */
export interface Caller {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  /** The authenticator's extra attributes (scopes, a node name, …), passed on to SubjectAccessReview. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** A static token (local use only). */
export interface StaticToken {
  readonly token: string;
  readonly user: string;
  readonly groups: readonly string[];
}

/** What an action needs: a verb on a resource, in a namespace. */
export interface AccessRequest {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
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
  /** Answers kept at most; the least recently used goes first. @default 10_000 */
  readonly maxCacheEntries?: number;
  readonly now?: () => number;
}

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

/** TokenReview + SubjectAccessReview against the cluster's API server. */
export class KubernetesAuth {
  private readonly authn: k8s.AuthenticationV1Api;
  private readonly authz: k8s.AuthorizationV1Api;
  /** TokenReview answers by token digest, valid and not (negative entries), least recently used first. */
  private readonly cache = new Map<string, { caller: Caller | undefined; at: number }>();
  private readonly now: () => number;

  constructor(private readonly options: KubernetesAuthOptions) {
    this.authn = options.kc.makeApiClient(k8s.AuthenticationV1Api);
    this.authz = options.kc.makeApiClient(k8s.AuthorizationV1Api);
    this.now = options.now ?? Date.now;
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
    const hit = this.cache.get(key);
    if (!hit || this.now() - hit.at >= (this.options.cacheMs ?? 10_000)) return undefined;
    this.cache.delete(key);
    this.cache.set(key, hit);
    return { caller: hit.caller };
  }

  /** The caller a bearer token belongs to, or undefined when the token is not valid. */
  async authenticate(token: string): Promise<Caller | undefined> {
    const known = this.known(token);
    if (known) return known.caller;
    const key = digest(token);
    const audiences = [...(this.options.audiences ?? defaultAudiences)];
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
    this.cache.delete(key);
    this.cache.set(key, { caller, at: this.now() });
    const max = this.options.maxCacheEntries ?? 10_000;
    while (this.cache.size > max) this.cache.delete(this.cache.keys().next().value as string);
    return caller;
  }

  /** TokenReview answers cached (valid and not). */
  get cachedAnswers(): number {
    return this.cache.size;
  }

  /** Whether the platform's RBAC allows the caller this access. */
  async authorize(caller: Caller, access: AccessRequest): Promise<boolean> {
    const review = await this.authz.createSubjectAccessReview({
      body: {
        spec: {
          user: caller.user,
          groups: [...caller.groups],
          ...(caller.uid ? { uid: caller.uid } : {}),
          ...(caller.extra
            ? { extra: Object.fromEntries(Object.entries(caller.extra).map(([k, v]) => [k, [...v]])) }
            : {}),
          resourceAttributes: {
            verb: access.verb,
            group: access.group,
            resource: access.resource,
            ...(access.namespace ? { namespace: access.namespace } : {}),
            ...(access.name ? { name: access.name } : {}),
          },
        },
      },
    });
    return review.status?.allowed === true;
  }
}
