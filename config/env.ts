/**
 * Configuration is parsed once, at the edge: each process describes its environment variables with
 * one zod schema; {@link parseEnv} collects every problem (zod's, the Temporal connection's and the
 * payload keys') so a bad configuration is reported whole, and {@link loadEnvOrExit} prints them and
 * exits with status 2.
 */
import type { z } from 'zod';
import { resolvePayloadCodec } from './payload-keys';
import { resolveTemporal, type TemporalSettings } from './temporal';
import { resolveTracing, type TracingSettings } from './tracing';

/** Thrown by {@link parseEnv}: every configuration problem, one per line of `problems`. */
export class ConfigError extends Error {
  constructor(
    readonly process: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${process} configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** A parsed configuration: the schema's output, frozen, the resolved Temporal connection and tracing. */
export interface ParsedEnv<T> {
  readonly config: Readonly<T>;
  readonly temporal: TemporalSettings;
  /** The OTEL_* variables homeostat honours (`tracing.ts`): off unless OTEL_TRACES_EXPORTER turns it on. */
  readonly tracing: TracingSettings;
}

/** The zod issues as `VARIABLE: message` lines. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join('.') || '(environment)'}: ${i.message}`);
}

/**
 * Parses `env` with `schema` and resolves the Temporal connection (`@temporalio/envconfig`: the
 * TEMPORAL_* variables over the profile of TEMPORAL_CONFIG_FILE) and tracing (OTEL_*). Throws a {@link ConfigError}
 * listing every problem found in both.
 */
export function parseEnv<S extends z.ZodType>(
  processName: string,
  schema: S,
  env: Record<string, string | undefined>,
): ParsedEnv<z.output<S>> {
  const parsed = schema.safeParse(env);
  const problems = parsed.success ? [] : describeIssues(parsed.error);
  const temporal = resolveTemporal(env);
  if ('problems' in temporal) problems.push(...temporal.problems);
  // The payload keys belong to the Temporal connection: every process that talks to Temporal reads them.
  const codec = resolvePayloadCodec(env);
  if ('problems' in codec) problems.push(...codec.problems);
  const tracing = resolveTracing(env);
  if ('problems' in tracing) problems.push(...tracing.problems);
  if (
    problems.length > 0 ||
    !parsed.success ||
    'problems' in temporal ||
    'problems' in codec ||
    'problems' in tracing
  ) {
    throw new ConfigError(processName, problems);
  }
  return {
    config: Object.freeze(parsed.data),
    temporal: codec.codec ? Object.freeze({ ...temporal, payloadCodec: codec.codec }) : temporal,
    tracing,
  };
}

/** {@link parseEnv}, printing every problem to stderr and exiting with status 2 when there is one. */
export function loadEnvOrExit<S extends z.ZodType>(
  processName: string,
  schema: S,
  env: Record<string, string | undefined> = process.env,
): ParsedEnv<z.output<S>> {
  try {
    return parseEnv(processName, schema, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}
