/**
 * Workers: the Temporal Runtime with logs forwarded to pino, the prebuilt workflow bundle, the worker
 * for the object workflow and its activities, and graceful shutdown.
 */
export * from './create-worker';
export * from './run-worker';
export { PinoTemporalLogger } from './logger';
