/**
 * The payload codec (AES-256-GCM, keys by id), its configuration (HOMEOSTAT_PAYLOAD_KEYS and _FILE)
 * and the codec endpoint's protocol, CORS and authorization hook on a bare Fastify instance. The
 * endpoint against the real TokenReview and SubjectAccessReview is in
 * test/integration/encrypted-histories.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { codecEndpoint, payloadToJson } from '../../api/codec-endpoint';
import { ApiProblem } from '../../api/problems';
import { ConfigError, parseEnv, parsePayloadKeys, resolvePayloadCodec } from '../../config';
import { isHomeostatError } from '../../core/errors';
import { AesGcmPayloadCodec, isEncryptedPayload, type PayloadKey } from '../../core/payload-codec';
import { workerEnvSchema } from '../../workers/config';

const home = { HOME: mkdtempSync(join(tmpdir(), 'homeostat-codec-home-')) };
const key = (id: string): PayloadKey => ({ id, key: randomBytes(32) });
const b64 = (k: PayloadKey): string => Buffer.from(k.key).toString('base64');
const secret = 'hunter2-pony-password';
const payloadOf = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const text = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

async function codecError(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (isHomeostatError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('no error');
}

describe('AES-256-GCM payload codec', () => {
  it('given payloads, encode hides their bytes and metadata and decode gives back the same payloads', async () => {
    const codec = new AesGcmPayloadCodec([key('k1')]);
    const original = [payloadOf({ env: { DB_PASSWORD: secret } }), payloadOf(null), payloadOf('x'.repeat(10_000))];
    const encoded = await codec.encode(original);
    expect(encoded).toHaveLength(3);
    for (const p of encoded) {
      expect(isEncryptedPayload(p)).toBe(true);
      expect(text(p.metadata?.encoding)).toBe('binary/encrypted');
      expect(text(p.metadata?.['encryption-key-id'])).toBe('k1');
      expect(text(p.data)).not.toContain(secret);
      expect(text(p.data)).not.toContain('json/plain'); // the original metadata is inside the ciphertext
    }
    // A random IV per payload: the same value twice gives two different ciphertexts.
    const [a, b] = await codec.encode([payloadOf('same'), payloadOf('same')]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
    expect(Buffer.from(a!.data!).subarray(0, 12).equals(Buffer.from(b!.data!).subarray(0, 12))).toBe(false);
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { env: { DB_PASSWORD: secret } },
      null,
      'x'.repeat(10_000),
    ]);
    expect(text(decoded[0]!.metadata?.encoding)).toBe('json/plain');
    expect(await codec.encode([])).toEqual([]);
  });

  it('given a new active key, data encrypted with the old key still decodes and new data uses the new key', async () => {
    const old = key('2024');
    const oldCodec = new AesGcmPayloadCodec([old]);
    const written = await oldCodec.encode([payloadOf(secret)]);
    const rotated = new AesGcmPayloadCodec([key('2025'), old]);
    expect(rotated.activeKeyId).toBe('2025');
    expect(rotated.keyIds).toEqual(['2025', '2024']);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode(written))[0]!)).toBe(secret);
    const fresh = await rotated.encode([payloadOf(secret)]);
    expect(text(fresh[0]!.metadata?.['encryption-key-id'])).toBe('2025');
    // The old codec cannot read what the new key wrote: the error names the key, never a key's bytes.
    const err = await codecError(oldCodec.decode(fresh));
    expect(err.code).toBe('ERR_PAYLOAD_CODEC');
    expect(err.message).toMatch(/key "2025", which this process does not have \(it has "2024"\)/);
    expect(err.message).not.toContain(b64(old));
  });

  it('given an altered payload, decode fails GCM authentication instead of returning altered data', async () => {
    const k = key('k1');
    const codec = new AesGcmPayloadCodec([k]);
    const [encrypted] = await codec.encode([payloadOf({ replicas: 3 })]);
    const data = Buffer.from(encrypted!.data!);
    for (const at of [0, 12, data.length - 20, data.length - 1]) {
      const tampered = Buffer.from(data);
      tampered[at] = tampered[at]! ^ 0x01;
      const err = await codecError(codec.decode([{ ...encrypted!, data: tampered }]));
      expect(err).toEqual({ code: 'ERR_PAYLOAD_CODEC', message: expect.stringMatching(/failed authentication/) });
    }
    // The same id with other key bytes is caught the same way.
    const impostor = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }]);
    expect((await codecError(impostor.decode([encrypted!]))).message).toMatch(/failed authentication/);
    expect((await codecError(codec.decode([{ ...encrypted!, data: data.subarray(0, 20) }]))).message).toMatch(
      /too short/,
    );
    const noId = { metadata: { encoding: encrypted!.metadata!.encoding! }, data };
    expect((await codecError(codec.decode([noId]))).message).toMatch(/no encryption-key-id metadata/);
  });

  it('given payloads without the encryption metadata (written before the codec was on), decode passes them unchanged', async () => {
    const codec = new AesGcmPayloadCodec([key('k1')]);
    const plain = [payloadOf({ a: 1 }), { metadata: {}, data: Buffer.from('raw') }, {}];
    const decoded = await codec.decode(plain);
    expect(decoded).toHaveLength(3);
    decoded.forEach((p, i) => expect(p).toBe(plain[i]));
  });

  it('given bad key lists, the codec refuses them naming each problem', () => {
    expect(() => new AesGcmPayloadCodec([])).toThrow(/no payload key given/);
    expect(() => new AesGcmPayloadCodec([{ id: 'short', key: randomBytes(16) }])).toThrow(
      /key "short" is 16 bytes; AES-256 needs 32/,
    );
    expect(() => new AesGcmPayloadCodec([key('a'), key('a')])).toThrow(/key id "a" is given twice/);
    expect(() => new AesGcmPayloadCodec([key('a;b')])).toThrow(/key id "a;b": use 1 to 64 letters/);
  });
});

describe('payload key configuration', () => {
  const k1 = key('k1');
  const k2 = key('k2');

  it('given id=base64 entries, the first is the active key, whitespace and newlines are ignored', () => {
    expect(parsePayloadKeys(`k1=${b64(k1)}; k2=${b64(k2)}`)).toEqual({
      keys: [
        { id: 'k1', key: Buffer.from(k1.key) },
        { id: 'k2', key: Buffer.from(k2.key) },
      ],
    });
    expect(parsePayloadKeys(`\n k1 = ${b64(k1)}\nk2=${b64(k2)}\n`)).toMatchObject({
      keys: [{ id: 'k1' }, { id: 'k2' }],
    });
  });

  it('given bad base64, a wrong key length, a duplicate id and a malformed entry, every problem is reported', () => {
    const short = randomBytes(16).toString('base64');
    const result = parsePayloadKeys(`k1=${b64(k1)};k2=not*base64;k3=${short};k1=${b64(k2)};=abc;junk`);
    expect(result).toEqual({
      problems: [
        'key "k2": not base64 (generate one with: openssl rand -base64 32)',
        'entry 5: expected <id>=<base64 of 32 bytes>',
        'entry 6: expected <id>=<base64 of 32 bytes>',
        'key "k3" is 16 bytes; AES-256 needs 32',
        'key id "k1" is given twice',
      ],
    });
    expect(JSON.stringify(result)).not.toContain(b64(k1)); // problems never quote a key
    expect(parsePayloadKeys(' ; ')).toEqual({ problems: ['no key: expected <id>=<base64 key>[;<id>=<base64 key>…]'] });
  });

  it('given the environment, the codec is off when unset or empty and on with the keys or the file', () => {
    expect(resolvePayloadCodec({})).toEqual({ codec: undefined });
    expect(resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS: '' })).toEqual({ codec: undefined });
    const fromEnv = resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS: `k2=${b64(k2)};k1=${b64(k1)}` });
    expect('codec' in fromEnv && fromEnv.codec?.keyIds).toEqual(['k2', 'k1']);
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-keys-'));
    writeFileSync(join(dir, 'keys'), `k1=${b64(k1)}\n`);
    const fromFile = resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS_FILE: join(dir, 'keys') });
    expect('codec' in fromFile && fromFile.codec?.activeKeyId).toBe('k1');
  });

  it('given problems in the variables, each is named with its variable; both set is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-keys-'));
    writeFileSync(join(dir, 'bad'), 'k1=YWJj');
    expect(resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS: 'k1=YWJj' })).toEqual({
      problems: ['HOMEOSTAT_PAYLOAD_KEYS: key "k1" is 3 bytes; AES-256 needs 32'],
    });
    expect(resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS_FILE: join(dir, 'bad') })).toEqual({
      problems: ['HOMEOSTAT_PAYLOAD_KEYS_FILE: in the file: key "k1" is 3 bytes; AES-256 needs 32'],
    });
    expect(resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS_FILE: join(dir, 'missing') })).toEqual({
      problems: [`HOMEOSTAT_PAYLOAD_KEYS_FILE: cannot read ${join(dir, 'missing')}: ENOENT`],
    });
    writeFileSync(join(dir, 'good'), `k1=${b64(k1)}`);
    expect(
      resolvePayloadCodec({ HOMEOSTAT_PAYLOAD_KEYS: `k1=${b64(k1)}`, HOMEOSTAT_PAYLOAD_KEYS_FILE: join(dir, 'good') }),
    ).toEqual({
      problems: ['HOMEOSTAT_PAYLOAD_KEYS_FILE: set HOMEOSTAT_PAYLOAD_KEYS or HOMEOSTAT_PAYLOAD_KEYS_FILE, not both'],
    });
  });

  it('given a process configuration, parseEnv puts the codec in the Temporal settings or reports with the rest', () => {
    expect(parseEnv('worker', workerEnvSchema, home).temporal.payloadCodec).toBeUndefined();
    const on = parseEnv('worker', workerEnvSchema, { ...home, HOMEOSTAT_PAYLOAD_KEYS: `k1=${b64(k1)}` });
    expect((on.temporal.payloadCodec as AesGcmPayloadCodec).activeKeyId).toBe('k1');
    expect(Object.isFrozen(on.temporal)).toBe(true);
    let problems: readonly string[] = [];
    try {
      parseEnv('worker', workerEnvSchema, { ...home, HOMEOSTAT_WORKER_PORT: 'x', HOMEOSTAT_PAYLOAD_KEYS: 'k1=abc' });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems.map((p) => p.split(':')[0])).toEqual(['HOMEOSTAT_WORKER_PORT', 'HOMEOSTAT_PAYLOAD_KEYS']);
  });
});

describe('codec endpoint (protocol, CORS, authorization hook)', () => {
  const uiOrigin = 'http://127.0.0.1:8233';
  const codec = new AesGcmPayloadCodec([key('k1')]);
  const calls: string[] = [];
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) =>
    reply.status(err instanceof ApiProblem ? err.status : (err.statusCode ?? 500)).send({ message: err.message }),
  );

  beforeAll(async () => {
    await app.register(codecEndpoint, {
      prefix: '/codec',
      codec,
      allowedOrigins: [`${uiOrigin}/some/path`],
      authorize: async (req, access) => {
        calls.push(`${access.verb} ${access.resource}.${access.group}`);
        if (req.headers.authorization !== 'Bearer good') throw new ApiProblem('ERR_UNAUTHENTICATED', 'no');
      },
    });
    await app.ready();
  });
  afterAll(() => app.close());

  it('given encrypted payloads in proto JSON, decode answers them decoded, encode encrypts them', async () => {
    const encoded = (await codec.encode([payloadOf({ password: secret })])).map(payloadToJson);
    const res = await app.inject({
      method: 'POST',
      url: '/codec/decode',
      headers: { authorization: 'Bearer good', origin: uiOrigin, 'x-namespace': 'default' },
      payload: { payloads: encoded },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(uiOrigin);
    const [decoded] = res.json<{ payloads: { metadata: Record<string, string>; data: string }[] }>().payloads;
    expect(Buffer.from(decoded!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(decoded!.data, 'base64').toString())).toEqual({ password: secret });

    const enc = await app.inject({
      method: 'POST',
      url: '/codec/encode',
      headers: { authorization: 'Bearer good' },
      payload: { payloads: [decoded] },
    });
    expect(enc.statusCode).toBe(200);
    const [again] = enc.json<{ payloads: { metadata: Record<string, string>; data: string }[] }>().payloads;
    expect(Buffer.from(again!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
    expect(calls).toEqual(['decode payloads.homeostat.dev', 'encode payloads.homeostat.dev']);
  });

  it('given no token, the hook refuses before the body is read, and the answer still carries CORS', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/codec/decode',
      headers: { origin: uiOrigin, 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(uiOrigin);
  });

  it('given a preflight, the allowed origin gets the methods and headers; another origin gets no CORS', async () => {
    const pre = await app.inject({
      method: 'OPTIONS',
      url: '/codec/decode',
      headers: { origin: uiOrigin, 'access-control-request-method': 'POST' },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers).toMatchObject({
      'access-control-allow-origin': uiOrigin,
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': expect.stringContaining('authorization') as string,
    });
    expect(pre.headers['access-control-allow-headers']).toContain('x-namespace');
    const evil = await app.inject({
      method: 'OPTIONS',
      url: '/codec/decode',
      headers: { origin: 'https://evil.test' },
    });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('given an unknown key id or malformed payloads, the answer is 400 naming the problem', async () => {
    const other = (await new AesGcmPayloadCodec([key('k9')]).encode([payloadOf(1)])).map(payloadToJson);
    const res = await app.inject({
      method: 'POST',
      url: '/codec/decode',
      headers: { authorization: 'Bearer good' },
      payload: { payloads: other },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ message: string }>().message).toMatch(/key "k9"/);
    const bad = await app.inject({
      method: 'POST',
      url: '/codec/decode',
      headers: { authorization: 'Bearer good' },
      payload: { payloads: [{ data: '***' }] },
    });
    expect(bad.statusCode).toBe(400);
  });
});
