/**
 * SCRAM-SHA-256 password verifiers computed on the client (RFC 5802, RFC 7677), in the form PostgreSQL
 * stores in `pg_authid.rolpassword`: `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`.
 * `CREATE/ALTER ROLE … PASSWORD '<verifier>'` stores it as is, so the password itself never reaches the
 * server, its statement log or `pg_stat_activity`.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** PostgreSQL's default `scram_iterations`. */
const defaultIterations = 4096;

/**
 * The SCRAM-SHA-256 verifier of `password`, with a fresh 16-byte random salt. Passwords homeostat
 * generates are ASCII (base64url), so SASLprep leaves them unchanged and is not applied.
 */
export function scramSha256Verifier(password: string, options: { salt?: Buffer; iterations?: number } = {}): string {
  const salt = options.salt ?? randomBytes(16);
  const iterations = options.iterations ?? defaultIterations;
  const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
