/** PostgreSQL errors mapped to homeostat's error catalog. */
import { HomeostatError, isHomeostatError } from '../../reconcilers';

/** SQLSTATE classes that mean "the server is not reachable right now". */
const unavailable = /^(08|57P0[1-3]|53300)/;
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);

/**
 * Maps a `pg` error to homeostat's catalog: unreachable → retryable, unsupported feature or unknown
 * extension → terminal, anything else an ordinary (retried) failure. A {@link HomeostatError} passes
 * through unchanged.
 */
export function fromPostgresError(err: unknown, what: string): HomeostatError {
  if (isHomeostatError(err)) return err;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = `${what}: ${typeof e.message === 'string' ? e.message : String(err)}`;
  if (networkCodes.has(code) || unavailable.test(code) || /Connection terminated|timeout/i.test(message)) {
    return new HomeostatError('ERR_NETWORK', `PostgreSQL unreachable: ${message}`, { cause: err });
  }
  if (code === '0A000' || code === '58P01' || code === '42704') {
    return new HomeostatError('ERR_STEP_TERMINAL', message, { cause: err });
  }
  return new HomeostatError('ERR_STEP_FAILED', message, { cause: err });
}
