/**
 * Configuration is checked once, at start: each production process given a bad environment prints
 * every problem (its own variables and the Temporal connection's) and exits non-zero before
 * connecting anywhere; the Temporal connection follows @temporalio/envconfig (profile file, then
 * TEMPORAL_* variables), so Temporal Cloud's address, namespace and API key work as they do elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseEnv } from '../../config';
import { workerEnvSchema } from '../../workers/config';

const cli = join(__dirname, '../../cli/homeostat.ts');

function run(command: string, env: Record<string, string>): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', cli, command], {
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stderr: result.stderr };
}

describe('process configuration', () => {
  const badTemporal = { TEMPORAL_ADDRESS: 'no-port-here', TEMPORAL_TLS: 'maybe' };

  it.each([
    [
      'worker',
      { ...badTemporal, HOMEOSTAT_WORKER_PORT: '99999', LOG_LEVEL: 'loud' },
      ['HOMEOSTAT_WORKER_PORT', 'LOG_LEVEL', 'TEMPORAL_ADDRESS', 'TEMPORAL_TLS'],
    ],
    [
      'bridge',
      { ...badTemporal, HOMEOSTAT_BRIDGE_RESOURCES: 'not json', HOMEOSTAT_BRIDGE_LEASE_SECONDS: '-1' },
      ['HOMEOSTAT_BRIDGE_RESOURCES: not JSON', 'HOMEOSTAT_BRIDGE_LEASE_SECONDS', 'TEMPORAL_ADDRESS', 'TEMPORAL_TLS'],
    ],
    [
      'api',
      {
        TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/client.pem',
        HOMEOSTAT_API_STATIC_TOKENS: 'short=me',
        HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE: '0',
        HOMEOSTAT_TEMPORAL_UI_URL: 'not a url',
      },
      [
        'HOMEOSTAT_API_STATIC_TOKENS',
        'HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE',
        'HOMEOSTAT_TEMPORAL_UI_URL',
        'TEMPORAL_TLS_CLIENT_CERT_PATH: no such file',
        'TEMPORAL_TLS_CLIENT_CERT_*/TEMPORAL_TLS_CLIENT_KEY_*: set both',
      ],
    ],
    [
      'all',
      { ...badTemporal, HOMEOSTAT_WORKER_PORT: 'x', HOMEOSTAT_BRIDGE_CONCURRENCY: '0', HOMEOSTAT_API_PORT: '-5' },
      [
        'HOMEOSTAT_WORKER_PORT',
        'HOMEOSTAT_BRIDGE_CONCURRENCY',
        'HOMEOSTAT_API_PORT',
        'TEMPORAL_ADDRESS',
        'TEMPORAL_TLS',
      ],
    ],
  ])('given homeostat %s with a bad environment, it prints every problem and exits 2', (command, env, problems) => {
    const { status, stderr } = run(command, env);
    expect(status).toBe(2);
    expect(stderr).toMatch(/^invalid .* configuration:/);
    for (const problem of problems) expect(stderr).toContain(`  ${problem}`);
    // One line per problem, nothing else (no stack trace, no connection attempt).
    expect(stderr.trim().split('\n')).toHaveLength(problems.length + 1);
  });

  it('given a Temporal config file profile and TEMPORAL_* overrides, the connection is the merge of both (Temporal Cloud)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-envconfig-'));
    const file = join(dir, 'temporal.toml');
    writeFileSync(
      file,
      [
        '[profile.cloud]',
        'address = "acme.a1b2c.tmprl.cloud:7233"',
        'namespace = "acme.a1b2c"',
        'api_key = "from-file"',
      ].join('\n'),
    );
    const { config, temporal } = parseEnv('worker', workerEnvSchema, {
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'cloud',
      TEMPORAL_API_KEY: 'from-env',
    });
    expect(temporal).toEqual({
      connectionOptions: { address: 'acme.a1b2c.tmprl.cloud:7233', apiKey: 'from-env', tls: true },
      namespace: 'acme.a1b2c',
    });
    expect(config.HOMEOSTAT_TASK_QUEUE).toBe('homeostat');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('given nothing set, the connection is the local default: localhost:7233, namespace default, no TLS', () => {
    expect(parseEnv('worker', workerEnvSchema, { HOME: tmpdir() }).temporal).toEqual({
      connectionOptions: { address: 'localhost:7233' },
      namespace: 'default',
    });
  });

  it('given a profile that is not in the file, the problem names the profile and the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-envconfig-'));
    const file = join(dir, 'temporal.toml');
    writeFileSync(file, '[profile.default]\naddress = "localhost:7233"\n');
    expect(() => parseEnv('worker', workerEnvSchema, { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' })).toThrow(
      ConfigError,
    );
    try {
      parseEnv('worker', workerEnvSchema, { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' });
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([expect.stringContaining(`profile "prod" of ${file}`)]);
    }
  });
});
