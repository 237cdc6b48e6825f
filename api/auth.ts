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
  /** Audiences the TokenReview asks for. @default the API server's */
  readonly audiences?: readonly string[];
  /** How long a TokenReview answer is reused. @default 10_000 */
  readonly cacheMs?: number;
  readonly now?: () => number;
}

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
  private readonly cache = new Map<string, { caller: Caller | undefined; at: number }>();
  private readonly now: () => number;

  constructor(private readonly options: KubernetesAuthOptions) {
    this.authn = options.kc.makeApiClient(k8s.AuthenticationV1Api);
    this.authz = options.kc.makeApiClient(k8s.AuthorizationV1Api);
    this.now = options.now ?? Date.now;
  }

  /** The caller a bearer token belongs to, or undefined when the token is not valid. */
  async authenticate(token: string): Promise<Caller | undefined> {
    for (const s of this.options.staticTokens ?? []) {
      const a = Buffer.from(digest(s.token));
      if (timingSafeEqual(a, Buffer.from(digest(token)))) return { user: s.user, groups: s.groups };
    }
    const key = digest(token);
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < (this.options.cacheMs ?? 10_000)) return hit.caller;
    const review = await this.authn.createTokenReview({
      body: { spec: { token, ...(this.options.audiences ? { audiences: [...this.options.audiences] } : {}) } },
    });
    const user = review.status?.authenticated ? review.status.user : undefined;
    const caller = user?.username
      ? { user: user.username, groups: user.groups ?? [], ...(user.uid ? { uid: user.uid } : {}) }
      : undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { caller, at: this.now() });
    return caller;
  }

  /** Whether the platform's RBAC allows the caller this access. */
  async authorize(caller: Caller, access: AccessRequest): Promise<boolean> {
    const review = await this.authz.createSubjectAccessReview({
      body: {
        spec: {
          user: caller.user,
          groups: [...caller.groups],
          ...(caller.uid ? { uid: caller.uid } : {}),
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
