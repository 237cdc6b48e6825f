/**
 * Sealed list page tokens: the API hands out Temporal's next-page token behind a MAC of the query it
 * belongs to, so only tokens this API issued, for the same query, reach Temporal (which retries an
 * unreadable token until the call's deadline).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Seals and opens page tokens with one key. */
export interface PageTokens {
  /** Temporal's token for `query`, sealed (base64url). */
  readonly seal: (query: string, token: Buffer) => string;
  /** The token sealed in `text` for `query`; undefined if this key did not seal it for that query. */
  readonly open: (query: string, text: string) => Buffer | undefined;
}

const macLength = 16;

/** Page tokens sealed with `key` (replicas behind one Service need the same key). */
export function pageTokens(key: Buffer = randomBytes(32)): PageTokens {
  const mac = (query: string, token: Buffer): Buffer =>
    createHmac('sha256', key).update(query).update('\0').update(token).digest().subarray(0, macLength);
  return {
    seal: (query, token) => Buffer.concat([mac(query, token), token]).toString('base64url'),
    open: (query, text) => {
      const raw = Buffer.from(text, 'base64url');
      if (raw.length <= macLength) return undefined;
      const token = raw.subarray(macLength);
      return timingSafeEqual(raw.subarray(0, macLength), mac(query, token)) ? token : undefined;
    },
  };
}
