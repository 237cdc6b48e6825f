/**
 * Local verification of bearer tokens: the pure JWT checks (algorithm, claims, signature) and the
 * issuer keys' fetches (refetch on an unknown key id, rate-limited; periodic refresh) with an
 * injected clock.
 */
import { generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { checkAlgorithm, checkClaims, decodeJwt, publicKeyOf, verifySignature, type DecodedJwt } from '../../api/jwt';
import { IssuerKeys, type IssuerDocument } from '../../api/issuer-keys';
import { oidcIssuer } from '../../api/issuer-sources';
import { TokenVerifier } from '../../api/token-verifier';

const issuer = 'https://kubernetes.default.svc';
const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

interface TestKey {
  readonly privateKey: KeyObject;
  readonly jwk: JsonWebKey;
  readonly alg: 'RS256' | 'ES256';
}

function testKey(alg: 'RS256' | 'ES256', kid: string): TestKey {
  const { privateKey, publicKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, alg, jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg } };
}

function jwt(key: TestKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const input = `${b64({ alg: key.alg, kid: key.jwk.kid, typ: 'JWT', ...header })}.${b64(claims)}`;
  const signature = sign('sha256', Buffer.from(input), {
    key: key.privateKey,
    ...(key.alg === 'ES256' ? { dsaEncoding: 'ieee-p1363' as const } : {}),
  });
  return `${input}.${signature.toString('base64url')}`;
}

const nowMs = 1_700_000_000_000;
const good = (over: Record<string, unknown> = {}) => ({
  iss: issuer,
  aud: ['homeostat'],
  sub: 'system:serviceaccount:team-a:backend',
  exp: nowMs / 1000 + 600,
  nbf: nowMs / 1000 - 10,
  ...over,
});
const checks = { issuers: new Set([issuer]), audiences: ['homeostat'], nowSeconds: nowMs / 1000, skewSeconds: 60 };

describe('JWT checks', () => {
  const rsa = testKey('RS256', 'rsa-1');
  const ec = testKey('ES256', 'ec-1');

  it('given something that is not a JWT, it is opaque; given a JWT header with a broken payload, it is malformed', () => {
    expect(decodeJwt('random-opaque-token')).toBe('opaque');
    expect(decodeJwt('a.b.c')).toBe('opaque');
    expect(decodeJwt(`${b64({ alg: 'RS256' })}.not-json.sig`)).toBe('malformed');
    expect(decodeJwt(`${b64({ alg: 7 })}.${b64({})}.`)).toBe('malformed');
    expect(decodeJwt(`${b64({ alg: 'RS256' })}.${b64([1])}.`)).toBe('malformed');
  });

  it('given alg none, HMAC or anything unlisted, it is refused; RS256, ES256 and their kin pass', () => {
    expect(checkAlgorithm('none')).toBe('unsigned');
    expect(checkAlgorithm('NONE')).toBe('unsigned');
    expect(checkAlgorithm('HS256')).toBe('unsupported-algorithm');
    for (const alg of ['RS256', 'RS512', 'PS256', 'ES256', 'ES384']) expect(checkAlgorithm(alg)).toBeUndefined();
  });

  it('given claims, it checks issuer, audience, expiry and not-before with the skew', () => {
    expect(checkClaims(good(), checks)).toBeUndefined();
    expect(checkClaims(good({ aud: 'homeostat' }), checks)).toBeUndefined();
    expect(checkClaims(good({ iss: 'https://evil.example' }), checks)).toBe('unknown-issuer');
    expect(checkClaims(good({ iss: undefined }), checks)).toBe('unknown-issuer');
    expect(checkClaims(good({ aud: ['vault', issuer] }), checks)).toBe('wrong-audience');
    expect(checkClaims(good({ aud: undefined }), checks)).toBe('wrong-audience');
    expect(checkClaims(good({ aud: [7] }), checks)).toBe('malformed');
    expect(checkClaims(good({ aud: undefined }), { ...checks, audiences: [] })).toBeUndefined();
    expect(checkClaims(good({ exp: undefined }), checks)).toBe('malformed');
    expect(checkClaims(good({ exp: '9999999999' }), checks)).toBe('malformed');
    expect(checkClaims(good({ exp: nowMs / 1000 - 60 }), checks)).toBeUndefined(); // within the skew
    expect(checkClaims(good({ exp: nowMs / 1000 - 61 }), checks)).toBe('expired');
    expect(checkClaims(good({ nbf: nowMs / 1000 + 60 }), checks)).toBeUndefined();
    expect(checkClaims(good({ nbf: nowMs / 1000 + 61 }), checks)).toBe('not-yet-valid');
  });

  it('given a signature, it verifies with the right key only, and never with a key of another type or a pinned other algorithm', () => {
    const decoded = (t: string) => decodeJwt(t) as DecodedJwt;
    const rsaKey = publicKeyOf(rsa.jwk)!;
    const ecKey = publicKeyOf(ec.jwk)!;
    const r = decoded(jwt(rsa, good()));
    const e = decoded(jwt(ec, good()));
    expect(verifySignature(r, rsaKey)).toBe(true);
    expect(verifySignature(e, ecKey)).toBe(true);
    expect(verifySignature(r, publicKeyOf(testKey('RS256', 'other').jwk)!)).toBe(false);
    expect(verifySignature(e, rsaKey)).toBe(false);
    expect(verifySignature(r, ecKey)).toBe(false);
    expect(verifySignature(r, rsaKey, 'RS512')).toBe(false);
    // A payload changed after signing.
    const [h, , s] = jwt(rsa, good()).split('.');
    expect(verifySignature(decoded(`${h}.${b64(good({ sub: 'system:admin' }))}.${s}`), rsaKey)).toBe(false);
    // A private JWK is never taken as a trusted public key.
    expect(publicKeyOf(rsa.privateKey.export({ format: 'jwk' }))).toBeUndefined();
  });
});

describe('issuer keys and the token verifier', () => {
  const keyA = testKey('RS256', 'key-a');
  const keyB = testKey('ES256', 'key-b');

  function setup(keys: JsonWebKey[], options: { minRefetchMs?: number; reviewOpaqueTokens?: boolean } = {}) {
    let time = nowMs;
    const published = { keys };
    const loads: number[] = [];
    const issuerKeys = new IssuerKeys({
      load: async (): Promise<IssuerDocument> => {
        loads.push(time);
        return { issuer, keys: published.keys };
      },
      now: () => time,
      ...(options.minRefetchMs !== undefined ? { minRefetchMs: options.minRefetchMs } : {}),
    });
    const verifier = new TokenVerifier({
      issuers: [issuerKeys],
      audiences: ['homeostat'],
      now: () => time,
      ...(options.reviewOpaqueTokens !== undefined ? { reviewOpaqueTokens: options.reviewOpaqueTokens } : {}),
    });
    return { verifier, loads, published, advance: (ms: number) => (time += ms) };
  }

  it('given a token signed by a published key, it is verified; forged, foreign, misdirected, expired or opaque ones are refused', async () => {
    const { verifier } = setup([keyA.jwk, keyB.jwk]);
    const own = testKey('RS256', 'key-a'); // the test's own key, under a published key id
    const header = b64({ alg: 'none', typ: 'JWT' });
    expect(await verifier.verify(jwt(keyA, good()))).toEqual({ verdict: 'verified', issuer });
    expect(await verifier.verify(jwt(keyB, good()))).toEqual({ verdict: 'verified', issuer });
    const refused = async (token: string) => ((await verifier.verify(token)) as { reason?: string }).reason;
    expect(await refused(`${header}.${b64(good())}.`)).toBe('unsigned');
    expect(await refused(jwt(own, good()))).toBe('bad-signature');
    expect(await refused(jwt(keyA, good({ iss: 'https://evil.example' })))).toBe('unknown-issuer');
    expect(await refused(jwt(keyA, good({ aud: [issuer] })))).toBe('wrong-audience');
    expect(await refused(jwt(keyA, good({ exp: nowMs / 1000 - 3600 })))).toBe('expired');
    expect(await refused('opaque-random-token')).toBe('opaque');
    expect(await refused(`${b64({ alg: 'RS256' })}.garbage!.x`)).toBe('opaque');
  });

  it('given opaque tokens may be reviewed, an opaque token is unverified (TokenReview decides) rather than refused', async () => {
    const { verifier } = setup([keyA.jwk], { reviewOpaqueTokens: true });
    expect(await verifier.verify('opaque-random-token')).toEqual({ verdict: 'unverified', reason: 'opaque' });
  });

  it('given keys that cannot be fetched, a JWT is unverified (keys-unavailable), so TokenReview and the failure budget decide', async () => {
    const keys = new IssuerKeys({
      load: () => Promise.reject(new Error('forbidden')),
      now: () => nowMs,
    });
    const verifier = new TokenVerifier({ issuers: [keys], audiences: ['homeostat'], now: () => nowMs });
    expect(await verifier.verify(jwt(keyA, good()))).toEqual({ verdict: 'unverified', reason: 'keys-unavailable' });
  });

  it('given a token signed by a key the JWKS does not have yet, it is refused; once published it verifies after the refetch interval', async () => {
    const { verifier, loads, published, advance } = setup([keyA.jwk], { minRefetchMs: 10_000 });
    const rotated = testKey('RS256', 'key-rotated');
    const token = jwt(rotated, good());
    expect(await verifier.verify(token)).toEqual({ verdict: 'refused', reason: 'unknown-key' });
    expect(loads).toHaveLength(1); // the keys were just fetched: no refetch yet
    published.keys = [keyA.jwk, rotated.jwk];
    advance(9_999);
    expect(await verifier.verify(token)).toEqual({ verdict: 'refused', reason: 'unknown-key' }); // rate-limited
    expect(loads).toHaveLength(1);
    advance(1);
    expect(await verifier.verify(token)).toEqual({ verdict: 'verified', issuer });
    expect(loads).toHaveLength(2);
  });

  it('given 1,000 tokens naming made-up key ids at once and then over a minute, the JWKS is fetched at most once per refetch interval', async () => {
    const { verifier, loads, advance } = setup([keyA.jwk], { minRefetchMs: 10_000 });
    await verifier.verify(jwt(keyA, good()));
    expect(loads).toHaveLength(1);
    advance(10_000);
    const burst = Array.from({ length: 1000 }, (_, i) => verifier.verify(jwt(keyA, good(), { kid: `made-up-${i}` })));
    expect(new Set((await Promise.all(burst)).map((v) => JSON.stringify(v)))).toEqual(
      new Set([JSON.stringify({ verdict: 'refused', reason: 'unknown-key' })]),
    );
    expect(loads).toHaveLength(2); // one shared refetch
    for (let s = 0; s < 60; s++) {
      advance(1_000);
      await verifier.verify(jwt(keyA, good(), { kid: `made-up-later-${s}` }));
    }
    expect(loads).toHaveLength(2 + 6);
  });

  it('given keys older than the refresh interval, they are fetched again, and a key removed from the JWKS stops verifying', async () => {
    let time = nowMs;
    let keys = [keyA.jwk];
    let loads = 0;
    const issuerKeys = new IssuerKeys({
      load: async () => {
        loads++;
        return { issuer, keys };
      },
      refreshMs: 600_000,
      now: () => time,
    });
    const verifier = new TokenVerifier({ issuers: [issuerKeys], audiences: ['homeostat'], now: () => time });
    expect((await verifier.verify(jwt(keyA, good()))).verdict).toBe('verified');
    keys = [keyB.jwk];
    time += 599_000;
    expect((await verifier.verify(jwt(keyA, good({ exp: time / 1000 + 600 })))).verdict).toBe('verified');
    expect(loads).toBe(1);
    time += 1_000;
    expect(await verifier.verify(jwt(keyA, good({ exp: time / 1000 + 600 })))).toEqual({
      verdict: 'refused',
      reason: 'unknown-key',
    });
    expect(loads).toBe(2);
  });

  it('given an OIDC issuer, its discovery document must name it, and its keys come from its jwks_uri', async () => {
    const oidc = 'https://login.example.com/realms/platform';
    const docs: Record<string, unknown> = {
      [`${oidc}/.well-known/openid-configuration`]: { issuer: oidc, jwks_uri: 'https://login.example.com/certs' },
      'https://login.example.com/certs': { keys: [keyB.jwk] },
    };
    const loaded = await oidcIssuer(oidc, async (url) => docs[url])();
    expect(loaded.issuer).toBe(oidc);
    expect(loaded.keys).toEqual([keyB.jwk]);
    docs[`${oidc}/.well-known/openid-configuration`] = { issuer: 'https://evil.example', jwks_uri: 'x' };
    await expect(oidcIssuer(oidc, async (url) => docs[url])()).rejects.toThrow(/names the issuer "https:\/\/evil/);
  });
});
