/**
 * The Temporal connection of every homeostat process, resolved the way Temporal's own tools do it:
 * `@temporalio/envconfig` reads the profile (TEMPORAL_PROFILE, default `default`) of the TOML file at
 * TEMPORAL_CONFIG_FILE (or the user's default config file, when present) and lays the TEMPORAL_*
 * variables over it — TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY (which turns TLS on, as
 * Temporal Cloud wants), TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH / _DATA,
 * TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA, TEMPORAL_TLS_SERVER_CA_CERT_PATH / _DATA,
 * TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_<NAME>.
 */
import { existsSync } from 'node:fs';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { PayloadCodec } from '@temporalio/common';
import type { NativeConnectionOptions } from '@temporalio/worker';

/** The default frontend address when neither the profile nor TEMPORAL_ADDRESS gives one. */
export const defaultTemporalAddress = 'localhost:7233';
/** The default namespace when neither the profile nor TEMPORAL_NAMESPACE gives one (Temporal's). */
export const defaultTemporalNamespace = 'default';

/** A resolved Temporal connection: options for `NativeConnection.connect` and `Connection.connect`. */
export interface TemporalSettings {
  readonly connectionOptions: NativeConnectionOptions & { readonly address: string };
  readonly namespace: string;
  /**
   * The codec every client and worker of the process puts between its payloads and Temporal
   * (HOMEOSTAT_PAYLOAD_KEYS, set by `parseEnv`); unset: payloads are stored as they are.
   */
  readonly payloadCodec?: PayloadCodec;
}

/**
 * The `dataConverter` option of a Temporal `Client` or `Worker` for these settings: the payload codec
 * when there is one, nothing otherwise. Spread it into the options: `new Client({ …, ...dataConverterOf(t) })`.
 */
export function dataConverterOf(settings: Pick<TemporalSettings, 'payloadCodec'>): {
  dataConverter?: { payloadCodecs: PayloadCodec[] };
} {
  return settings.payloadCodec ? { dataConverter: { payloadCodecs: [settings.payloadCodec] } } : {};
}

const boolValues = new Set(['true', 'false', '1', '0']);
const pathVariables = [
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
];

/**
 * Resolves the Temporal connection from `env`; returns every problem found instead of throwing, so
 * they can be reported with the process's other configuration problems.
 */
export function resolveTemporal(env: Record<string, string | undefined>): TemporalSettings | { problems: string[] } {
  const problems: string[] = [];
  const address = env.TEMPORAL_ADDRESS;
  if (address !== undefined && !/^[^\s:/]+:\d{1,5}$/.test(address) && !/^\[[0-9a-f:]+\]:\d{1,5}$/i.test(address)) {
    problems.push(`TEMPORAL_ADDRESS: expected host:port, got "${address}"`);
  }
  if (env.TEMPORAL_NAMESPACE === '') problems.push('TEMPORAL_NAMESPACE: must not be empty');
  for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
    const value = env[name];
    if (value !== undefined && !boolValues.has(value.toLowerCase())) {
      problems.push(`${name}: expected true, false, 1 or 0, got "${value}"`);
    }
  }
  for (const name of pathVariables) {
    const path = env[name];
    if (path !== undefined && !existsSync(path)) problems.push(`${name}: no such file: ${path}`);
  }
  const cert = env.TEMPORAL_TLS_CLIENT_CERT_PATH ?? env.TEMPORAL_TLS_CLIENT_CERT_DATA;
  const key = env.TEMPORAL_TLS_CLIENT_KEY_PATH ?? env.TEMPORAL_TLS_CLIENT_KEY_DATA;
  if ((cert === undefined) !== (key === undefined)) {
    problems.push('TEMPORAL_TLS_CLIENT_CERT_*/TEMPORAL_TLS_CLIENT_KEY_*: set both (mTLS) or neither');
  }
  if (problems.length > 0) return { problems };

  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[0].startsWith('TEMPORAL_') && e[1] !== undefined),
  );
  try {
    // HOME and XDG_CONFIG_HOME locate the default config file; nothing else of the environment is read.
    for (const name of ['HOME', 'XDG_CONFIG_HOME']) {
      const value = env[name];
      if (value !== undefined) overrideEnvVars[name] = value;
    }
    const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars });
    return Object.freeze({
      connectionOptions: { ...connectionOptions, address: connectionOptions.address ?? defaultTemporalAddress },
      namespace: namespace ?? defaultTemporalNamespace,
    });
  } catch (err) {
    const source = `profile "${env.TEMPORAL_PROFILE ?? 'default'}" of ${env.TEMPORAL_CONFIG_FILE ?? 'the default config file'}`;
    return { problems: [`TEMPORAL_* (${source}): ${err instanceof Error ? err.message : String(err)}`] };
  }
}
