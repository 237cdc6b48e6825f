/**
 * Encrypted payloads: a Temporal `PayloadCodec` that encrypts every payload with AES-256-GCM before it
 * leaves the process, so workflow histories hold ciphertext (object references, step results, the
 * values an App's spec carries). Codecs run outside the workflow sandbox, so workflow code is the same
 * with or without it.
 *
 * The wire format is the one of Temporal's encryption samples (Go, Python, TypeScript), so a codec
 * server written with any SDK and the same keys can read it: metadata `encoding: binary/encrypted` and
 * `encryption-key-id: <id>`; data = a random 12-byte IV ‖ the ciphertext ‖ the 16-byte GCM tag, of the
 * original payload serialized as `temporal.api.common.v1.Payload` (its metadata included).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { HomeostatError } from './errors';

/** The `encoding` metadata of an encrypted payload. */
export const encryptedPayloadEncoding = 'binary/encrypted';
/** The metadata key naming the key that encrypted a payload. */
export const payloadKeyIdMetadataKey = 'encryption-key-id';
/** The metadata key naming the cipher (informative: Java's samples write it too). */
export const payloadCipherMetadataKey = 'encryption-cipher';
/** Length of a payload key in bytes (AES-256). */
export const payloadKeyLength = 32;
/** What a key id may contain: it is written in every payload's metadata and in `id=key;…` lists. */
export const payloadKeyIdPattern = /^[A-Za-z0-9._-]{1,64}$/;

const cipher = 'aes-256-gcm';
const ivLength = 12;
const tagLength = 16;
const ProtoPayload = temporal.api.common.v1.Payload;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** One payload key: its id (written in the metadata of what it encrypts) and its 32 bytes. */
export interface PayloadKey {
  readonly id: string;
  readonly key: Uint8Array;
}

/**
 * The problems of a key list, one sentence each (empty when it is usable): no key, a bad or duplicate
 * id, a key that is not {@link payloadKeyLength} bytes.
 */
export function payloadKeyProblems(keys: readonly PayloadKey[]): string[] {
  if (keys.length === 0) return ['no payload key given'];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const { id, key } of keys) {
    if (!payloadKeyIdPattern.test(id)) {
      problems.push(`key id "${id}": use 1 to 64 letters, digits, dots, dashes or underscores`);
    } else if (seen.has(id)) {
      problems.push(`key id "${id}" is given twice`);
    }
    seen.add(id);
    if (key.length !== payloadKeyLength) {
      problems.push(`key "${id}" is ${key.length} bytes; AES-256 needs ${payloadKeyLength}`);
    }
  }
  return problems;
}

/** Whether a payload was written by an {@link AesGcmPayloadCodec} (by its `encoding` metadata). */
export function isEncryptedPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding != null && fromUtf8.decode(encoding) === encryptedPayloadEncoding;
}

/**
 * AES-256-GCM payload encryption with keys by id, for rotation: {@link encode} encrypts with the
 * active key (the first one given), {@link decode} decrypts with the key the payload's metadata names.
 * To rotate, put the new key first and keep the old ones as long as histories written with them are
 * read. Payloads without the encryption metadata (written before the codec was turned on) pass
 * through {@link decode} unchanged. A payload altered in Temporal fails GCM authentication.
 *
 * Failures are `HomeostatError`s with code `ERR_PAYLOAD_CODEC`.
 *
 * @example
 * ```ts
 * const codec = new AesGcmPayloadCodec([{ id: '2025-06', key: Buffer.from(base64Key, 'base64') }]);
 * const client = new Client({ connection, dataConverter: { payloadCodecs: [codec] } });
 * ```
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  /** The id of the key new payloads are encrypted with. */
  readonly activeKeyId: string;
  private readonly keys: ReadonlyMap<string, Buffer>;

  /** @param keys the active key first, then older keys still needed to read older payloads. */
  constructor(keys: readonly PayloadKey[]) {
    const problems = payloadKeyProblems(keys);
    if (problems.length > 0) {
      throw new HomeostatError('ERR_PAYLOAD_CODEC', `invalid payload keys: ${problems.join('; ')}`);
    }
    this.activeKeyId = keys[0]!.id;
    // Copies: a caller that later zeroes or reuses its buffers does not change the codec's keys.
    this.keys = new Map(keys.map((k) => [k.id, Buffer.from(k.key)]));
  }

  /** The ids of the keys this codec holds, the active one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Encrypts each payload with the active key. */
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encrypt(p));
  }

  /** Decrypts each encrypted payload with the key its metadata names; other payloads pass unchanged. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => (isEncryptedPayload(p) ? this.decrypt(p) : p));
  }

  private encrypt(payload: Payload): Payload {
    const key = this.keys.get(this.activeKeyId)!;
    const iv = randomBytes(ivLength);
    const c = createCipheriv(cipher, key, iv, { authTagLength: tagLength });
    const plain = ProtoPayload.encode(payload).finish();
    const data = Buffer.concat([iv, c.update(plain), c.final(), c.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8.encode(encryptedPayloadEncoding),
        [payloadKeyIdMetadataKey]: utf8.encode(this.activeKeyId),
        [payloadCipherMetadataKey]: utf8.encode('AES/GCM/NoPadding'),
      },
      data,
    };
  }

  private decrypt(payload: Payload): Payload {
    const idBytes = payload.metadata?.[payloadKeyIdMetadataKey];
    if (idBytes == null) {
      throw new HomeostatError('ERR_PAYLOAD_CODEC', `an encrypted payload has no ${payloadKeyIdMetadataKey} metadata`);
    }
    const id = fromUtf8.decode(idBytes);
    const key = this.keys.get(id);
    if (!key) {
      throw new HomeostatError(
        'ERR_PAYLOAD_CODEC',
        `payload encrypted with key "${id}", which this process does not have (it has ${this.keyIds.map((k) => `"${k}"`).join(', ')}): keep old keys in HOMEOSTAT_PAYLOAD_KEYS after a rotation`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < ivLength + tagLength) {
      throw new HomeostatError('ERR_PAYLOAD_CODEC', `an encrypted payload (key "${id}") is too short to be one`);
    }
    const d = createDecipheriv(cipher, key, data.subarray(0, ivLength), { authTagLength: tagLength });
    d.setAuthTag(data.subarray(data.length - tagLength));
    let plain: Buffer;
    try {
      plain = Buffer.concat([d.update(data.subarray(ivLength, data.length - tagLength)), d.final()]);
    } catch (err) {
      throw new HomeostatError(
        'ERR_PAYLOAD_CODEC',
        `an encrypted payload (key "${id}") failed authentication: it was altered, or encrypted with another key of that id`,
        { cause: err },
      );
    }
    return ProtoPayload.decode(plain);
  }
}
