/**
 * Who calls, and whether they may: the bearer token of a request authenticated (a static token, a
 * cached answer or a TokenReview) and the access it asks for authorized (SubjectAccessReview), with a
 * budget of failed authentications per client address spent before any TokenReview.
 */
import type { FastifyRequest } from 'fastify';
import type { AccessRequest, Caller, KubernetesAuth } from './auth';
import { AuthFailureLimiter } from './failure-limiter';
import { ApiProblem } from './problems';

/** The authentication and authorization the API's routes use. */
export interface RequestAuth {
  /** The request's caller; throws a 401 problem (or 429 past the failure budget). */
  readonly caller: (req: FastifyRequest) => Promise<Caller>;
  /** Throws a 403 problem unless `who` may do `access`. */
  readonly allow: (who: Caller, access: AccessRequest) => Promise<void>;
}

function bearer(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m?.[1]) throw new ApiProblem('ERR_UNAUTHENTICATED', 'the Authorization header must be "Bearer <token>"');
  return m[1];
}

/**
 * Authenticates and authorizes through `auth`. Failed authentications are counted per client address
 * and refused past `failuresPerMinute` before any TokenReview: random tokens cost the API server a
 * bounded number of reviews (the rate limit is per token, so each made-up token would otherwise start
 * a fresh bucket).
 */
export function requestAuth(
  auth: Pick<KubernetesAuth, 'authenticate' | 'authorize'> & Partial<Pick<KubernetesAuth, 'known'>>,
  failuresPerMinute: number,
): RequestAuth {
  const failures = new AuthFailureLimiter({ perWindow: failuresPerMinute });
  const caller = async (req: FastifyRequest): Promise<Caller> => {
    const wait = failures.retryAfterMs(req.ip);
    const refuse = (problem: ApiProblem): never => {
      if (wait > 0) {
        throw new ApiProblem('ERR_RATE_LIMITED', `too many failed authentications from ${req.ip}`, {
          retryAfterSeconds: Math.ceil(wait / 1000),
        });
      }
      failures.fail(req.ip);
      throw problem;
    };
    let token: string | undefined;
    try {
      token = bearer(req);
    } catch (err) {
      if (err instanceof ApiProblem) return refuse(err);
      throw err;
    }
    if (!token) return refuse(new ApiProblem('ERR_UNAUTHENTICATED', 'a bearer token is required'));
    const invalid = new ApiProblem(
      'ERR_UNAUTHENTICATED',
      'the bearer token is not valid, or not meant for this API (mint it with --audience homeostat)',
    );
    // A static token or a cached answer costs nothing: a valid caller is let in even from an address
    // over its budget. Only a token that needs a TokenReview is refused there.
    const known = auth.known?.(token);
    if (known) return known.caller ?? refuse(invalid);
    if (wait > 0) return refuse(invalid);
    const who = await auth.authenticate(token);
    return who ?? refuse(invalid);
  };
  const allow = async (who: Caller, access: AccessRequest): Promise<void> => {
    if (!(await auth.authorize(who, access))) {
      const where = access.namespace ? ` in namespace ${access.namespace}` : ' cluster-wide';
      throw new ApiProblem(
        'ERR_FORBIDDEN',
        `${who.user} may not ${access.verb} ${access.resource}.${access.group || 'core'}${where}`,
      );
    }
  };
  return { caller, allow };
}
