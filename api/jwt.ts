/**
 * The pure checks of a JSON Web Token (RFC 7519) signed with JWS (RFC 7515): decoding, the algorithm,
 * the claims a bearer token must carry (issuer, audience, lifetime) and the signature against a public
 * key from the issuer's JWKS. No I/O: the keys come from `issuer-keys.ts`, the order of the checks
 * from `token-verifier.ts`.
 */
import { createPublicKey, verify, constants, type KeyObject, type JsonWebKey } from 'node:crypto';

/** Why a token was refused without asking the API server (the label of `homeostat_api_auth_refusals_total`). */
export type TokenRefusal =
  | 'opaque'
  | 'malformed'
  | 'unsigned'
  | 'unsupported-algorithm'
  | 'unknown-issuer'
  | 'wrong-audience'
  | 'expired'
  | 'not-yet-valid'
  | 'unknown-key'
  | 'bad-signature';

/** A JWT split into what the checks read. */
export interface DecodedJwt {
  readonly header: { readonly alg: string; readonly kid?: string };
  readonly claims: Readonly<Record<string, unknown>>;
  /** `<header>.<payload>` as sent: the signed bytes. */
  readonly signingInput: string;
  readonly signature: Buffer;
}

const segment = /^[A-Za-z0-9_-]*$/;

function json(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Splits a compact JWS. `'opaque'` when the token is not a JWT at all (three base64url parts whose
 * first is a JSON header with `alg`); `'malformed'` when it is one whose payload or types are broken.
 */
export function decodeJwt(token: string): DecodedJwt | 'opaque' | 'malformed' {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => segment.test(p))) return 'opaque';
  const [h, p, s] = parts as [string, string, string];
  const header = json(h);
  if (!isObject(header) || !('alg' in header)) return 'opaque';
  const claims = json(p);
  if (typeof header.alg !== 'string' || (header.kid !== undefined && typeof header.kid !== 'string')) {
    return 'malformed';
  }
  if (!isObject(claims)) return 'malformed';
  return {
    header: { alg: header.alg, ...(header.kid !== undefined ? { kid: header.kid } : {}) },
    claims,
    signingInput: `${h}.${p}`,
    signature: Buffer.from(s, 'base64url'),
  };
}

/** How each accepted algorithm verifies; anything else (`none`, HMAC, …) is refused. */
const algorithms: Readonly<
  Record<string, { digest: string; kty: 'rsa' | 'ec'; curve?: string; pss?: boolean; bytes?: number }>
> = {
  RS256: { digest: 'sha256', kty: 'rsa' },
  RS384: { digest: 'sha384', kty: 'rsa' },
  RS512: { digest: 'sha512', kty: 'rsa' },
  PS256: { digest: 'sha256', kty: 'rsa', pss: true },
  PS384: { digest: 'sha384', kty: 'rsa', pss: true },
  PS512: { digest: 'sha512', kty: 'rsa', pss: true },
  ES256: { digest: 'sha256', kty: 'ec', curve: 'prime256v1', bytes: 64 },
  ES384: { digest: 'sha384', kty: 'ec', curve: 'secp384r1', bytes: 96 },
  ES512: { digest: 'sha512', kty: 'ec', curve: 'secp521r1', bytes: 132 },
};

/** Whether `alg` is one a token may be signed with: `'unsigned'` for `none`, `'unsupported-algorithm'` for the rest. */
export function checkAlgorithm(alg: string): TokenRefusal | undefined {
  if (alg.toLowerCase() === 'none') return 'unsigned';
  return algorithms[alg] ? undefined : 'unsupported-algorithm';
}

/** Options of {@link checkClaims}. */
export interface ClaimChecks {
  /** Issuers trusted (`iss` must equal one). */
  readonly issuers: ReadonlySet<string>;
  /** `aud` must include one of these; empty: not checked here (TokenReview decides). */
  readonly audiences: readonly string[];
  /** Now, in seconds since the epoch. */
  readonly nowSeconds: number;
  /** Clock skew allowed on `exp` and `nbf`, in seconds. */
  readonly skewSeconds: number;
}

/** The claims' verdict: undefined when `iss`, `aud`, `exp` and `nbf` are acceptable. `exp` is required. */
export function checkClaims(claims: Readonly<Record<string, unknown>>, c: ClaimChecks): TokenRefusal | undefined {
  if (typeof claims.iss !== 'string' || !c.issuers.has(claims.iss)) return 'unknown-issuer';
  const aud = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (aud !== undefined && (!Array.isArray(aud) || !aud.every((a) => typeof a === 'string'))) return 'malformed';
  if (c.audiences.length > 0 && !(aud ?? []).some((a: string) => c.audiences.includes(a))) return 'wrong-audience';
  if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) return 'malformed';
  if (c.nowSeconds > claims.exp + c.skewSeconds) return 'expired';
  if (claims.nbf !== undefined) {
    if (typeof claims.nbf !== 'number' || !Number.isFinite(claims.nbf)) return 'malformed';
    if (c.nowSeconds < claims.nbf - c.skewSeconds) return 'not-yet-valid';
  }
  return undefined;
}

/** A JWK made a public key, or undefined when it is not a usable public signing key. */
export function publicKeyOf(jwk: JsonWebKey): KeyObject | undefined {
  if ((jwk.use !== undefined && jwk.use !== 'sig') || 'd' in jwk) return undefined;
  try {
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    return key.type === 'public' ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `jwt` is signed by `key` with its header's algorithm; a key of the wrong type or curve for
 * the algorithm (an RSA key for ES256, a P-384 key for ES256) never verifies.
 */
export function verifySignature(jwt: DecodedJwt, key: KeyObject, keyAlg?: string): boolean {
  const a = algorithms[jwt.header.alg];
  if (!a || key.asymmetricKeyType !== a.kty || (keyAlg !== undefined && keyAlg !== jwt.header.alg)) return false;
  if (a.curve && key.asymmetricKeyDetails?.namedCurve !== a.curve) return false;
  if (a.bytes !== undefined && jwt.signature.length !== a.bytes) return false;
  try {
    return verify(
      a.digest,
      Buffer.from(jwt.signingInput),
      {
        key,
        ...(a.kty === 'ec' ? { dsaEncoding: 'ieee-p1363' as const } : {}),
        ...(a.pss ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : {}),
      },
      jwt.signature,
    );
  } catch {
    return false;
  }
}
