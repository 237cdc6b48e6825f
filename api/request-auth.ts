/**
 * Who calls, and whether they may: the bearer token of a request authenticated (a static token, a
 * cached answer, or local verification against the issuer's keys and then a TokenReview) and the
 * access it asks for authorized (SubjectAccessReview, cached briefly), with a budget of failed
 * TokenReviews per client address for the tokens local verification cannot judge.
 */
import type { FastifyRequest } from 'fastify';
import type { AccessRequest, ApiAuth, Caller, TokenVerdict } from './auth';
import { AuthFailureLimiter } from './failure-limiter';
import { ApiProblem } from './problems';

/** The authentication and authorization the API's routes use. */
export interface RequestAuth {
  /** The request's caller; throws a 401 problem (or 429 for an unverifiable token past the failure budget). */
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
 * Authenticates and authorizes through `auth`. A static token or a cached answer costs nothing; any
 * other token is first verified locally, and one refused there (malformed, unsigned, forged, foreign,
 * misdirected, expired) gets 401 without a TokenReview and without spending any budget. A token
 * verified locally always gets its TokenReview (revocation), whatever its address did before: a valid
 * caller behind a shared address is never refused for others' junk. Only tokens local verification
 * cannot judge (opaque tokens when they may be reviewed, JWTs while their issuer's keys cannot be
 * fetched) are counted per client address and refused with 429 past `failuresPerMinute`.
 */
export function requestAuth(auth: ApiAuth, failuresPerMinute: number): RequestAuth {
  const failures = new AuthFailureLimiter({ perWindow: failuresPerMinute });
  const invalid = (): ApiProblem =>
    new ApiProblem(
      'ERR_UNAUTHENTICATED',
      'the bearer token is not valid, or not meant for this API (mint it with --audience homeostat)',
    );
  const caller = async (req: FastifyRequest): Promise<Caller> => {
    const token = bearer(req);
    if (!token) throw new ApiProblem('ERR_UNAUTHENTICATED', 'a bearer token is required');
    const known = auth.known?.(token);
    if (known) {
      if (known.caller) return known.caller;
      throw invalid();
    }
    const verdict: TokenVerdict = auth.check
      ? await auth.check(token)
      : { verdict: 'unverified', reason: 'keys-unavailable' };
    if (verdict.verdict === 'refused') {
      req.log.debug({ reason: verdict.reason }, 'bearer token refused without a TokenReview');
      throw invalid();
    }
    if (verdict.verdict === 'unverified') {
      const wait = failures.retryAfterMs(req.ip);
      if (wait > 0) {
        throw new ApiProblem('ERR_RATE_LIMITED', `too many failed authentications from ${req.ip}`, {
          retryAfterSeconds: Math.ceil(wait / 1000),
        });
      }
    }
    const who = await (auth.review ? auth.review(token) : auth.authenticate(token));
    if (who) return who;
    if (verdict.verdict === 'unverified') failures.fail(req.ip);
    throw invalid();
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
