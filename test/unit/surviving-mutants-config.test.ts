/**
 * What the mutation run left untested in api/config.ts and config/temporal.ts: the API's page-token
 * key (empty means none, base64 of at least 32 bytes, the problem text for a shorter one), the origins
 * allowed to call the codec endpoint (trimmed, `*` or a URL each, the problem naming a bad one), the
 * audiences trimmed of spaces, and `dataConverterOf` with and without a payload codec. Parsing goes
 * through `parseEnv`, as in config-parsing.test.ts, with a HOME of its own so no user config is read.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import { apiEnvSchema } from '../../api/config';
import { ConfigError, dataConverterOf, parseEnv } from '../../config';

const home = { HOME: mkdtempSync(join(tmpdir(), 'homeostat-mutants-e-home-')) };
/** The API serves HTTPS only: its environments name a certificate (not read while parsing). */
const tls = { HOMEOSTAT_API_TLS_CERT_FILE: '/tls/tls.crt', HOMEOSTAT_API_TLS_KEY_FILE: '/tls/tls.key' };
const api = (vars: Record<string, string>) => parseEnv('api', apiEnvSchema, { ...home, ...tls, ...vars }).config;
const problemsOf = (vars: Record<string, string>): string[] => {
  try {
    api(vars);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('no ConfigError');
};

describe('surviving mutants of api/config.ts', () => {
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + 1) % 256));

  it('given a page-token key, an empty one means none, 32 or more base64 bytes are the key, and fewer are refused with the way to make one', () => {
    expect(api({ HOMEOSTAT_API_PAGE_TOKEN_KEY: '' }).HOMEOSTAT_API_PAGE_TOKEN_KEY).toBeUndefined();
    expect(api({}).HOMEOSTAT_API_PAGE_TOKEN_KEY).toBeUndefined();
    for (const n of [32, 48]) {
      const key = bytes(n);
      expect(api({ HOMEOSTAT_API_PAGE_TOKEN_KEY: key.toString('base64') }).HOMEOSTAT_API_PAGE_TOKEN_KEY).toEqual(key);
    }
    // 24 bytes are 32 characters of base64: read as text they would pass the length check.
    for (const n of [31, 24]) {
      expect(problemsOf({ HOMEOSTAT_API_PAGE_TOKEN_KEY: bytes(n).toString('base64') })).toEqual([
        'HOMEOSTAT_API_PAGE_TOKEN_KEY: must be at least 32 bytes, base64 (openssl rand -base64 32)',
      ]);
    }
  });

  it('given codec origins, they are trimmed and kept when `*` or a URL, none means unset, and anything else is named', () => {
    expect(
      api({ HOMEOSTAT_CODEC_ALLOWED_ORIGINS: ' https://ui.example:8233 , *,' }).HOMEOSTAT_CODEC_ALLOWED_ORIGINS,
    ).toEqual(['https://ui.example:8233', '*']);
    expect(api({ HOMEOSTAT_CODEC_ALLOWED_ORIGINS: ' , ' }).HOMEOSTAT_CODEC_ALLOWED_ORIGINS).toBeUndefined();
    expect(api({}).HOMEOSTAT_CODEC_ALLOWED_ORIGINS).toBeUndefined();
    expect(problemsOf({ HOMEOSTAT_CODEC_ALLOWED_ORIGINS: '*, ui.example ,http://ok.example' })).toEqual([
      'HOMEOSTAT_CODEC_ALLOWED_ORIGINS: not an origin: "ui.example"',
    ]);
  });

  it('given audiences with spaces around them, each is trimmed', () => {
    expect(
      api({ HOMEOSTAT_API_AUDIENCES: ' homeostat , https://kubernetes.default.svc ' }).HOMEOSTAT_API_AUDIENCES,
    ).toEqual(['homeostat', 'https://kubernetes.default.svc']);
  });
});

describe('surviving mutants of config/temporal.ts', () => {
  it('given settings with a payload codec, dataConverterOf puts it in the codecs; without one, it gives nothing', () => {
    const codec: PayloadCodec = { encode: (p) => Promise.resolve(p), decode: (p) => Promise.resolve(p) };
    expect(dataConverterOf({ payloadCodec: codec })).toEqual({ dataConverter: { payloadCodecs: [codec] } });
    expect(dataConverterOf({ payloadCodec: codec }).dataConverter?.payloadCodecs[0]).toBe(codec);
    expect(dataConverterOf({})).toEqual({});
  });
});
