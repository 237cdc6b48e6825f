/**
 * Forwards the Temporal SDK's logs (worker, workflow `log`, activity context logs and, through the
 * Runtime, Core's native logs) to pino. Task tokens never reach the log (a token completes or fails
 * the activity it names), and a failed activity attempt — each retry of a step — is one compact line
 * instead of the SDK's whole failure with its stack and cause chain.
 */
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/worker';
import type { Logger } from 'pino';

const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** The SDK's message for a failed activity attempt (`@temporalio/worker`'s activity runner). */
const activityFailedMessage = 'Activity failed';

/** The message of the compact line that replaces it. */
export const attemptFailedMessage = 'activity attempt failed';

/** What the compact line keeps of the SDK's metadata: which object, which activity, which attempt. */
const compactKeys = ['workflowId', 'activityType', 'attempt', 'isLocal', 'durationMs'] as const;

/** Log metadata keys that are secrets and never written. */
const redactedKeys = new Set(['taskToken']);

/** The message of an error as the SDK logs it (an `ApplicationFailure`, an `Error`, anything). */
function messageOf(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return error === undefined ? undefined : JSON.stringify(error);
}

/** A failure's type (`ApplicationFailure.type`), when it has one. */
function typeOf(error: unknown): string | undefined {
  const type = typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/**
 * What is written for one SDK log record: the metadata without secrets, and for a failed activity
 * attempt only which object (its workflow ID names it), which activity (a step's is
 * `<plural>.<group>/<step>`), which attempt, and the error's message and type.
 */
function shapeLogRecord(message: string, meta: LogMetadata = {}): { meta: LogMetadata; message: string } {
  if (message === activityFailedMessage && 'error' in meta) {
    const failure: LogMetadata = { err: messageOf(meta.error) };
    const type = typeOf(meta.error);
    if (type !== undefined) failure.type = type;
    const kept: Record<string, unknown> = {};
    for (const key of compactKeys) if (meta[key] !== undefined) kept[key] = meta[key] as unknown;
    return { message: attemptFailedMessage, meta: { ...kept, ...failure } };
  }
  if (!Object.keys(meta).some((k) => redactedKeys.has(k))) return { meta, message };
  return { meta: Object.fromEntries(Object.entries(meta).filter(([k]) => !redactedKeys.has(k))), message };
}

/** A Temporal `Logger` that writes to a pino logger: metadata first, the message second (see {@link shapeLogRecord}). */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly pino: Logger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const shaped = shapeLogRecord(message, meta);
    this.pino[levels[level]](shaped.meta, shaped.message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
