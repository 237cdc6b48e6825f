/**
 * Forwards the Temporal SDK's logs (worker, workflow `log`, activity context logs and, through the
 * Runtime, Core's native logs) to pino.
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

/** A Temporal `Logger` that writes to a pino logger: metadata first, the message second. */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly pino: Logger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.pino[levels[level]](meta ?? {}, message);
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
