/**
 * The payload keys of every process that talks to Temporal: HOMEOSTAT_PAYLOAD_KEYS, or
 * HOMEOSTAT_PAYLOAD_KEYS_FILE (the same text in a file, e.g. a mounted Secret), as
 * `id=<base64 of 32 bytes>;id2=<…>` with the active key first. Unset (or empty), payloads are not
 * encrypted. Parsed with the process's other variables by `parseEnv`, every problem reported.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AesGcmPayloadCodec, type PayloadKey, payloadKeyLength, payloadKeyProblems } from '../core/payload-codec';

const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Parses `id=<base64 key>;id2=<base64 key>` (whitespace and newlines around entries ignored, the
 * active key first). Returns the keys, or every problem found, one sentence each; a problem never
 * quotes a key.
 */
export function parsePayloadKeys(text: string): { keys: PayloadKey[] } | { problems: string[] } {
  const problems: string[] = [];
  const keys: PayloadKey[] = [];
  const entries = text
    .split(/[;\n]/)
    .map((e) => e.trim())
    .filter(Boolean);
  entries.forEach((entry, i) => {
    const eq = entry.indexOf('=');
    if (eq <= 0) {
      problems.push(`entry ${i + 1}: expected <id>=<base64 of ${payloadKeyLength} bytes>`);
      return;
    }
    const id = entry.slice(0, eq).trim();
    const encoded = entry.slice(eq + 1).trim();
    if (encoded.length % 4 !== 0 || !base64.test(encoded)) {
      problems.push(`key "${id}": not base64 (generate one with: openssl rand -base64 32)`);
      return;
    }
    keys.push({ id, key: Buffer.from(encoded, 'base64') });
  });
  if (entries.length > 0) problems.push(...payloadKeyProblems(keys).filter((p) => p !== 'no payload key given'));
  else problems.push('no key: expected <id>=<base64 key>[;<id>=<base64 key>…]');
  return problems.length > 0 ? { problems } : { keys };
}

const keyList = (source: string) =>
  z.string().transform((text, ctx): PayloadKey[] | undefined => {
    if (text.trim() === '') return undefined;
    const parsed = parsePayloadKeys(text);
    if ('problems' in parsed) {
      for (const p of parsed.problems) ctx.addIssue({ code: 'custom', message: `${source}${p}` });
      return z.NEVER;
    }
    return parsed.keys;
  });

/** The payload-key variables, checked together (the file is read here, at start). */
export const payloadKeysEnvSchema = z
  .object({
    /** `id=<base64 key>;…`, the active key first. Unset: payloads are not encrypted. */
    HOMEOSTAT_PAYLOAD_KEYS: keyList('').optional(),
    /** A file holding the same text (a mounted Secret). */
    HOMEOSTAT_PAYLOAD_KEYS_FILE: z
      .string()
      .min(1)
      .transform((path, ctx) => {
        try {
          return readFileSync(path, 'utf8');
        } catch (err) {
          ctx.addIssue({
            code: 'custom',
            message: `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          });
          return z.NEVER;
        }
      })
      .pipe(keyList('in the file: '))
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (v.HOMEOSTAT_PAYLOAD_KEYS && v.HOMEOSTAT_PAYLOAD_KEYS_FILE) {
      ctx.addIssue({
        code: 'custom',
        path: ['HOMEOSTAT_PAYLOAD_KEYS_FILE'],
        message: 'set HOMEOSTAT_PAYLOAD_KEYS or HOMEOSTAT_PAYLOAD_KEYS_FILE, not both',
      });
    }
  })
  .transform((v) => v.HOMEOSTAT_PAYLOAD_KEYS ?? v.HOMEOSTAT_PAYLOAD_KEYS_FILE);

/**
 * The payload codec the environment asks for: an {@link AesGcmPayloadCodec} with the configured keys,
 * `undefined` when no keys are configured, or every problem found (`VARIABLE: message` lines).
 */
export function resolvePayloadCodec(
  env: Record<string, string | undefined>,
): { codec: AesGcmPayloadCodec | undefined } | { problems: string[] } {
  const parsed = payloadKeysEnvSchema.safeParse({
    HOMEOSTAT_PAYLOAD_KEYS: env.HOMEOSTAT_PAYLOAD_KEYS,
    HOMEOSTAT_PAYLOAD_KEYS_FILE: env.HOMEOSTAT_PAYLOAD_KEYS_FILE,
  });
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((i) => `${i.path.join('.') || 'HOMEOSTAT_PAYLOAD_KEYS'}: ${i.message}`),
    };
  }
  return { codec: parsed.data ? new AesGcmPayloadCodec(parsed.data) : undefined };
}
