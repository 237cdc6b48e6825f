/**
 * The PostgreSQL connection pieces of the built-in operator, in process: SCRAM-SHA-256 verifiers
 * against RFC 7677's worked example, libpq's sslmode semantics mapped to node-postgres' TLS options,
 * admin URL parsing, and namespace selectors.
 */
import { createHash, createHmac } from 'node:crypto';
import { isHomeostatError } from '../../reconcilers';
import {
  markedUid,
  ownerMark,
  parseServerUrl,
  scramSha256Verifier,
  selectorMatches,
  tlsOptionsFor,
} from '../../builtin';

describe('SCRAM-SHA-256 verifiers computed client-side', () => {
  it('given RFC 7677’s example (pencil, its salt, 4096 rounds), the verifier’s keys reproduce the RFC’s proof and signature', () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const verifier = scramSha256Verifier('pencil', { salt, iterations: 4096 });
    const [, iterationsAndSalt, keys] = verifier.split('$');
    expect(verifier.startsWith('SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$')).toBe(true);
    expect(iterationsAndSalt).toBe('4096:W22ZaJ0SNY7soEsUEjb6gQ==');
    const [storedKey, serverKey] = keys!.split(':').map((k) => Buffer.from(k, 'base64'));
    const nonce = 'rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
    const authMessage = `n=user,r=rOprNGfwEbeRWgbNEkqO,r=${nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=${nonce}`;
    const serverSignature = createHmac('sha256', serverKey!).update(authMessage).digest('base64');
    expect(serverSignature).toBe('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    const clientProof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64');
    const clientSignature = createHmac('sha256', storedKey!).update(authMessage).digest();
    const clientKey = Buffer.from(clientProof.map((b, i) => b ^ clientSignature[i]!));
    expect(createHash('sha256').update(clientKey).digest().equals(storedKey!)).toBe(true);
  });

  it('given the same password twice, the salts differ and the password does not appear in the verifier', () => {
    const a = scramSha256Verifier('sparkle-pony');
    const b = scramSha256Verifier('sparkle-pony');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$/);
    expect(a).not.toContain('sparkle-pony');
  });
});

describe('admin URLs and sslmode', () => {
  it('given no sslmode, it is libpq’s prefer: TLS without verification (with a plain fallback at connect)', () => {
    const address = parseServerUrl('postgres://admin:p%40ss@db.example:6543/ranch', 'url');
    expect(address).toMatchObject({
      host: 'db.example',
      port: 6543,
      user: 'admin',
      password: 'p@ss',
      database: 'ranch',
      sslmode: 'prefer',
    });
    expect(tlsOptionsFor(address.sslmode)).toEqual({ rejectUnauthorized: false });
  });

  it('given each sslmode, the TLS options mean what libpq means (require does not verify unless given a CA)', () => {
    expect(tlsOptionsFor('disable')).toBe(false);
    expect(tlsOptionsFor('allow')).toBe(false);
    expect(tlsOptionsFor('require')).toEqual({ rejectUnauthorized: false });
    const withCa = tlsOptionsFor('require', 'PEM') as {
      ca?: string;
      rejectUnauthorized?: boolean;
      checkServerIdentity?: unknown;
    };
    expect(withCa).toMatchObject({ ca: 'PEM', rejectUnauthorized: true });
    expect(typeof withCa.checkServerIdentity).toBe('function'); // verify-ca: the chain, not the host name
    const ca = tlsOptionsFor('verify-ca') as { rejectUnauthorized?: boolean; checkServerIdentity?: () => unknown };
    expect(ca.rejectUnauthorized).toBe(true);
    expect(ca.checkServerIdentity?.()).toBeUndefined();
    expect(tlsOptionsFor('verify-full', 'PEM')).toEqual({ ca: 'PEM', rejectUnauthorized: true });
  });

  it.each(['postgres://a@h/db?sslmode=required', 'not a url', 'mysql://root@h/db'])(
    'given %s, parsing fails terminally',
    (url) => {
      let error: unknown;
      try {
        parseServerUrl(url, 'admin Secret');
      } catch (err) {
        error = err;
      }
      expect(isHomeostatError(error) && error.code).toBe('ERR_STEP_TERMINAL');
    },
  );
});

describe('namespace selectors and ownership marks', () => {
  it('given matchLabels and each expression operator, it matches as the API server does; {} matches every namespace', () => {
    const labels = { team: 'ranch', tier: 'prod' };
    expect(selectorMatches({}, labels)).toBe(true);
    expect(selectorMatches({}, {})).toBe(true);
    expect(selectorMatches({ matchLabels: { team: 'ranch' } }, labels)).toBe(true);
    expect(selectorMatches({ matchLabels: { team: 'other' } }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['prod'] }] }, labels)).toBe(
      true,
    );
    expect(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['prod'] }] }, labels)).toBe(
      false,
    );
    expect(selectorMatches({ matchExpressions: [{ key: 'absent', operator: 'NotIn', values: ['x'] }] }, labels)).toBe(
      true,
    );
    expect(selectorMatches({ matchExpressions: [{ key: 'team', operator: 'Exists' }] }, labels)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'absent', operator: 'In', values: [''] }] }, labels)).toBe(
      false,
    );
  });

  it('given a mark, only homeostat’s exact form yields a UID', () => {
    const uid = '0b8a3c1e-5f7d-4a2b-9c6e-1d2f3a4b5c6d';
    expect(markedUid(ownerMark(uid))).toBe(uid);
    expect(markedUid(null)).toBeUndefined();
    expect(markedUid(`legacy ${ownerMark(uid)}`)).toBeUndefined();
    expect(markedUid(`${ownerMark(uid)} trailing`)).toBeUndefined();
    expect(markedUid('homeostat.dev/owner-uid=')).toBeUndefined();
  });
});
