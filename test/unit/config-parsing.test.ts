/**
 * Configuration parsing in process, variable by variable: each process's defaults and bounds, the
 * transforms (static tokens, watched resources as JSON, booleans), the problem list and its wording,
 * and the Temporal connection's checks. The process-level behaviour (print and exit 2) is in
 * process-config.test.ts; this file is for mutants of the config code that survived (issue 17).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { apiEnvSchema, loadApiConfig } from '../../api/config';
import { ConfigError, describeIssues, loadEnvOrExit, parseEnv, resolveTemporal } from '../../config';
import { loadBridgeConfig, parseBridgeConfig } from '../../informer-bridge/config';
import { loadWorkerConfig, workerEnvSchema } from '../../workers/config';

const home = { HOME: mkdtempSync(join(tmpdir(), 'homeostat-config-home-')) };
/** The API serves HTTPS only: its environments name a certificate (not read while parsing). */
const tls = { HOMEOSTAT_API_TLS_CERT_FILE: '/tls/tls.crt', HOMEOSTAT_API_TLS_KEY_FILE: '/tls/tls.key' };
const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('no ConfigError');
};
const resources = JSON.stringify([{ group: 'g', version: 'v1', plural: 'things', kind: 'Thing', namespaced: true }]);

describe('configuration parsing', () => {
  it('given only a certificate, the API gets its documented defaults', () => {
    expect(parseEnv('api', apiEnvSchema, { ...home, ...tls }).config).toEqual({
      HOMEOSTAT_TASK_QUEUE: 'homeostat',
      HOMEOSTAT_FAIRNESS: 'namespace',
      HOMEOSTAT_FAIRNESS_WEIGHTS: {},
      HOMEOSTAT_API_PORT: 8080,
      HOMEOSTAT_API_HOST: '0.0.0.0',
      ...tls,
      HOMEOSTAT_API_INSECURE_HTTP: 'false',
      HOMEOSTAT_API_AUDIENCES: ['homeostat'],
      HOMEOSTAT_API_STATIC_TOKENS: [],
      HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'false',
      HOMEOSTAT_API_AUTH_FAILURES_PER_MINUTE: 30,
      HOMEOSTAT_API_OIDC_ISSUERS: [],
      HOMEOSTAT_API_REVIEW_OPAQUE_TOKENS: 'false',
      HOMEOSTAT_API_ACCESS_CACHE_ALLOWED_SECONDS: 30,
      HOMEOSTAT_API_ACCESS_CACHE_DENIED_SECONDS: 5,
      HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE: 600,
      HOMEOSTAT_API_RECONCILE_WAIT_SECONDS: 30,
      LOG_LEVEL: 'info',
    });
    expect(
      parseEnv('api', apiEnvSchema, { ...home, ...tls, HOMEOSTAT_API_STATIC_TOKENS: '' }).config
        .HOMEOSTAT_API_STATIC_TOKENS,
    ).toEqual([]);
    expect(
      parseEnv('api', apiEnvSchema, { ...home, ...tls, HOMEOSTAT_API_AUDIENCES: '' }).config.HOMEOSTAT_API_AUDIENCES,
    ).toEqual([]);
    expect(
      parseEnv('api', apiEnvSchema, {
        ...home,
        ...tls,
        HOMEOSTAT_API_OIDC_ISSUERS: 'https://login.example.com/realms/a, https://accounts.google.com',
      }).config.HOMEOSTAT_API_OIDC_ISSUERS,
    ).toEqual(['https://login.example.com/realms/a', 'https://accounts.google.com']);
    expect(
      problemsOf(() =>
        parseEnv('api', apiEnvSchema, { ...home, ...tls, HOMEOSTAT_API_OIDC_ISSUERS: 'http://login.example.com' }),
      ),
    ).toEqual(['HOMEOSTAT_API_OIDC_ISSUERS: not an HTTPS issuer URL: "http://login.example.com"']);
  });

  it('given no certificate, half of one, or static tokens without their flag or inside a cluster, the API refuses to start and says why', () => {
    expect(problemsOf(() => parseEnv('api', apiEnvSchema, home))).toEqual([
      'HOMEOSTAT_API_TLS_CERT_FILE: the API serves HTTPS: set HOMEOSTAT_API_TLS_CERT_FILE and HOMEOSTAT_API_TLS_KEY_FILE (or HOMEOSTAT_API_INSECURE_HTTP=true for local use)',
    ]);
    expect(
      parseEnv('api', apiEnvSchema, { ...home, HOMEOSTAT_API_INSECURE_HTTP: 'true' }).config
        .HOMEOSTAT_API_INSECURE_HTTP,
    ).toBe('true');
    expect(
      problemsOf(() => parseEnv('api', apiEnvSchema, { ...home, HOMEOSTAT_API_TLS_CERT_FILE: '/tls/tls.crt' })),
    ).toContain(
      'HOMEOSTAT_API_TLS_KEY_FILE: set both HOMEOSTAT_API_TLS_CERT_FILE and HOMEOSTAT_API_TLS_KEY_FILE, or neither',
    );
    const statics = { ...home, ...tls, HOMEOSTAT_API_STATIC_TOKENS: `${'a'.repeat(16)}=me:system:masters` };
    expect(problemsOf(() => parseEnv('api', apiEnvSchema, statics))).toEqual([
      'HOMEOSTAT_API_STATIC_TOKENS: static tokens bypass Kubernetes authentication: set HOMEOSTAT_API_INSECURE_STATIC_TOKENS=true to accept them (local use only)',
    ]);
    expect(
      parseEnv('api', apiEnvSchema, { ...statics, HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true' }).config
        .HOMEOSTAT_API_STATIC_TOKENS,
    ).toHaveLength(1);
    expect(
      problemsOf(() =>
        parseEnv('api', apiEnvSchema, {
          ...statics,
          HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
          KUBERNETES_SERVICE_HOST: '10.0.0.1',
        }),
      ),
    ).toEqual([
      'HOMEOSTAT_API_STATIC_TOKENS: static tokens are refused inside a Kubernetes cluster (KUBERNETES_SERVICE_HOST is set)',
    ]);
  });

  it('given static tokens, the API parses them, and a malformed one is a problem with its reason', () => {
    const token = 'a'.repeat(16);
    expect(
      parseEnv('api', apiEnvSchema, {
        ...home,
        ...tls,
        HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
        HOMEOSTAT_API_STATIC_TOKENS: `${token}=pony:admins,system:masters`,
      }).config.HOMEOSTAT_API_STATIC_TOKENS,
    ).toEqual([{ token, user: 'pony', groups: ['admins', 'system:masters'] }]);
    expect(
      problemsOf(() => parseEnv('api', apiEnvSchema, { ...home, ...tls, HOMEOSTAT_API_STATIC_TOKENS: 'short=me' })),
    ).toEqual([
      'HOMEOSTAT_API_STATIC_TOKENS: static tokens look like <token of 16+ characters>=<user>[:<group>,<group>]',
    ]);
  });

  it('given values at and past their bounds, the API and the worker accept the first and name the second', () => {
    const ok = { ...home, ...tls, HOMEOSTAT_API_PORT: '65535', HOMEOSTAT_API_RECONCILE_WAIT_SECONDS: '300' };
    expect(parseEnv('api', apiEnvSchema, ok).config).toMatchObject({
      HOMEOSTAT_API_PORT: 65535,
      HOMEOSTAT_API_RECONCILE_WAIT_SECONDS: 300,
    });
    expect(
      problemsOf(() =>
        parseEnv('api', apiEnvSchema, {
          ...home,
          ...tls,
          HOMEOSTAT_API_PORT: '65536',
          HOMEOSTAT_API_RECONCILE_WAIT_SECONDS: '301',
          HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE: '0',
          HOMEOSTAT_TEMPORAL_UI_URL: 'not a url',
        }),
      ).map((p) => p.split(':')[0]),
    ).toEqual([
      'HOMEOSTAT_API_PORT',
      'HOMEOSTAT_API_RATE_LIMIT_PER_MINUTE',
      'HOMEOSTAT_API_RECONCILE_WAIT_SECONDS',
      'HOMEOSTAT_TEMPORAL_UI_URL',
    ]);
    expect(parseEnv('worker', workerEnvSchema, { ...home, HOMEOSTAT_WORKER_PORT: '0' }).config).toEqual({
      HOMEOSTAT_TASK_QUEUE: 'homeostat',
      HOMEOSTAT_WORKER_PORT: 0,
      HOMEOSTAT_WORKER_MAX_CONCURRENT_ACTIVITIES: 20,
      HOMEOSTAT_WORKER_VERSIONING: true,
      HOMEOSTAT_ROLLOUT: 'manual',
      LOG_LEVEL: 'info',
    });
    expect(
      problemsOf(() =>
        parseEnv('worker', workerEnvSchema, {
          ...home,
          HOMEOSTAT_WORKER_PORT: '-1',
          HOMEOSTAT_WORKER_MAX_CONCURRENT_ACTIVITIES: '1.5',
          HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS: '-1',
          HOMEOSTAT_TASK_QUEUE: '',
        }),
      ).map((p) => p.split(':')[0]),
    ).toEqual([
      'HOMEOSTAT_TASK_QUEUE',
      'HOMEOSTAT_WORKER_PORT',
      'HOMEOSTAT_WORKER_MAX_CONCURRENT_ACTIVITIES',
      'HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS',
    ]);
    const cache = (v: string) =>
      parseEnv('worker', workerEnvSchema, { ...home, HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS: v }).config
        .HOMEOSTAT_WORKER_MAX_CACHED_WORKFLOWS;
    expect(cache('0')).toBe(0);
    expect(cache('5000')).toBe(5000);
    expect(problemsOf(() => cache('lots'))).toHaveLength(1);
    expect(problemsOf(() => cache('99999999999'))).toHaveLength(1);
  });

  it('given the bridge’s booleans, true and 1 are on, false and 0 are off, anything else is a problem', () => {
    const leader = (v: string) =>
      parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: resources, HOMEOSTAT_BRIDGE_LEADER_ELECTION: v })
        .HOMEOSTAT_BRIDGE_LEADER_ELECTION;
    expect(['true', '1', 'false', '0'].map(leader)).toEqual([true, true, false, false]);
    expect(() => leader('yes')).toThrow(ConfigError);
  });

  it('given the bridge’s resources, a JSON list of one or more is read, anything else is named', () => {
    expect(parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: resources }).HOMEOSTAT_BRIDGE_RESOURCES).toEqual(
      JSON.parse(resources),
    );
    expect(parseBridgeConfig({}).HOMEOSTAT_BRIDGE_RESOURCES).toBeUndefined();
    expect(problemsOf(() => parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: '[]' }))[0]).toMatch(
      /^HOMEOSTAT_BRIDGE_RESOURCES: /,
    );
    expect(problemsOf(() => parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: '{oops' }))).toEqual([
      expect.stringMatching(/^HOMEOSTAT_BRIDGE_RESOURCES: not JSON: /),
    ]);
    expect(
      problemsOf(() =>
        parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: resources, HOMEOSTAT_BRIDGE_RESYNC_SECONDS: '0' }),
      ).map((p) => p.split(':')[0]),
    ).toEqual(['HOMEOSTAT_BRIDGE_RESYNC_SECONDS']);
  });

  it('given problems, the ConfigError names the process and lists each on its own indented line', () => {
    const err = new ConfigError('worker', ['A: bad', 'B: worse']);
    expect(err).toMatchObject({ name: 'ConfigError', process: 'worker', problems: ['A: bad', 'B: worse'] });
    expect(err.message).toBe('invalid worker configuration:\n  A: bad\n  B: worse');
    const issues = z.object({ a: z.object({ b: z.string() }) }).safeParse({ a: { b: 1 } });
    expect(describeIssues(issues.error!)).toEqual([expect.stringMatching(/^a\.b: /)]);
    expect(describeIssues(z.string().safeParse(1).error!)).toEqual([expect.stringMatching(/^\(environment\): /)]);
  });

  it('given problems in both the variables and the Temporal connection, parseEnv reports all, variables first', () => {
    expect(
      problemsOf(() =>
        parseEnv('worker', workerEnvSchema, { ...home, HOMEOSTAT_WORKER_PORT: 'x', TEMPORAL_NAMESPACE: '' }),
      ).map((p) => p.split(':')[0]),
    ).toEqual(['HOMEOSTAT_WORKER_PORT', 'TEMPORAL_NAMESPACE']);
    expect(problemsOf(() => parseEnv('worker', workerEnvSchema, { ...home, TEMPORAL_NAMESPACE: '' }))).toEqual([
      'TEMPORAL_NAMESPACE: must not be empty',
    ]);
    const parsed = parseEnv('worker', workerEnvSchema, { ...home, TEMPORAL_ADDRESS: 'temporal:7233' });
    expect(parsed.temporal.connectionOptions.address).toBe('temporal:7233');
    expect(Object.isFrozen(parsed.config)).toBe(true);
  });

  it('given Temporal addresses, host:port and [ipv6]:port pass and anything else is named with its value', () => {
    for (const good of ['temporal:7233', 'localhost:1', '10.0.0.1:65535', '[::1]:7233', '[FE80::1]:7233']) {
      expect(resolveTemporal({ ...home, TEMPORAL_ADDRESS: good })).toMatchObject({
        connectionOptions: { address: good },
      });
    }
    for (const bad of [
      'temporal',
      'temporal:',
      ':7233',
      'a b:7233',
      'h/x:7233',
      'h:123456',
      '[::1]',
      'x[::1]:1',
      'h:1 ',
    ]) {
      expect(resolveTemporal({ ...home, TEMPORAL_ADDRESS: bad })).toEqual({
        problems: [`TEMPORAL_ADDRESS: expected host:port, got "${bad}"`],
      });
    }
  });

  it('given TLS switches, true/false/1/0 in any case pass and other values are named', () => {
    for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
      for (const good of ['true', 'FALSE', '1', '0'])
        expect(resolveTemporal({ ...home, [name]: good })).not.toHaveProperty('problems');
      expect(resolveTemporal({ ...home, [name]: 'maybe' })).toEqual({
        problems: [`${name}: expected true, false, 1 or 0, got "maybe"`],
      });
    }
  });

  it('given file paths and client certificates, missing files and half a pair are problems', () => {
    for (const name of ['TEMPORAL_CONFIG_FILE', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH']) {
      expect(resolveTemporal({ ...home, [name]: '/nonexistent/x.pem' })).toEqual({
        problems: [`${name}: no such file: /nonexistent/x.pem`],
      });
    }
    const half = 'TEMPORAL_TLS_CLIENT_CERT_*/TEMPORAL_TLS_CLIENT_KEY_*: set both (mTLS) or neither';
    expect(resolveTemporal({ ...home, TEMPORAL_TLS_CLIENT_CERT_DATA: 'c' })).toEqual({ problems: [half] });
    expect(resolveTemporal({ ...home, TEMPORAL_TLS_CLIENT_KEY_DATA: 'k' })).toEqual({ problems: [half] });
    expect(resolveTemporal({ ...home, TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/k.pem' })).toEqual({
      problems: ['TEMPORAL_TLS_CLIENT_KEY_PATH: no such file: /nonexistent/k.pem', half],
    });
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-tls-'));
    writeFileSync(join(dir, 'c.pem'), 'c');
    expect(
      resolveTemporal({
        ...home,
        TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir, 'c.pem'),
        TEMPORAL_TLS_CLIENT_KEY_DATA: 'k',
      }),
    ).not.toHaveProperty('problems');
  });

  it('given a profile, the default config file is found through XDG_CONFIG_HOME or HOME, and a missing profile is named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-xdg-'));
    mkdirSync(join(dir, 'temporalio'));
    writeFileSync(join(dir, 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "from-file:7233"\n');
    expect(resolveTemporal({ ...home, XDG_CONFIG_HOME: dir })).toMatchObject({
      connectionOptions: { address: 'from-file:7233' },
    });
    mkdirSync(join(dir, '.config'));
    mkdirSync(join(dir, '.config', 'temporalio'));
    writeFileSync(join(dir, '.config', 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "home:7233"\n');
    expect(resolveTemporal({ HOME: dir })).toMatchObject({ connectionOptions: { address: 'home:7233' } });
    expect(resolveTemporal({ ...home, XDG_CONFIG_HOME: dir, TEMPORAL_PROFILE: 'prod' })).toEqual({
      problems: [expect.stringMatching(/^TEMPORAL_\* \(profile "prod" of the default config file\): .*prod/)],
    });
  });
});

describe('configuration loaders', () => {
  it('given a valid environment, each process loader returns the parsed configuration without exiting', () => {
    // An exit would end the test process (and a mutation run with it): it fails this test instead.
    const exit = jest.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exited with ${String(code)}`);
    });
    try {
      expect(loadWorkerConfig(home).config.HOMEOSTAT_WORKER_PORT).toBe(8080);
      expect(loadApiConfig({ ...home, ...tls }).config.HOMEOSTAT_API_PORT).toBe(8080);
      expect(loadBridgeConfig({ ...home, HOMEOSTAT_BRIDGE_RESOURCES: resources }).config.HOMEOSTAT_BRIDGE_PORT).toBe(
        8080,
      );
      expect(loadEnvOrExit('x', workerEnvSchema, home).temporal.namespace).toBe('default');
    } finally {
      exit.mockRestore();
    }
  });

  it('given an error that is not a configuration problem, loadEnvOrExit rethrows it instead of exiting', () => {
    const broken = z.string().transform(() => {
      throw new TypeError('a bug in a transform');
    });
    expect(() => loadEnvOrExit('x', z.object({ A: broken }), { ...home, A: 'a' })).toThrow(TypeError);
  });
});
