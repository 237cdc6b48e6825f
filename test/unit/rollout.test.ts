/**
 * The decisions of `homeostat rollout` that need no server: which build a ramp or promote means, which
 * version a rollback goes back to, which names and percentages are refused, how the server's errors
 * read, and the status table. The calls themselves run against the real stack in
 * test/integration/rollout.test.ts.
 */
import { formatRolloutStatus, formatRoutingChange } from '../../cli/rollout-output';
import {
  assertRampPercent,
  isRolloutError,
  buildIdProblem,
  candidateBuildId,
  type DeploymentDescription,
  deploymentNameProblem,
  previousCurrentBuildId,
  rolloutErrorFrom,
  versionSearchValue,
} from '../../core/rollout';

const target = { namespace: 'homeostat', deploymentName: 'ops' };

function deployment(over: Partial<DeploymentDescription>): DeploymentDescription {
  return { ...target, conflictToken: new Uint8Array(), versions: [], ...over };
}

describe('rollout decisions', () => {
  it('given a deployment and a build, the search value joins them with ":"', () => {
    expect(versionSearchValue('ops', '0-4-0')).toBe('ops:0-4-0');
  });

  it('given versions, ramp and promote default to the Ramping one, else the newest that is not Current', () => {
    const versions = [
      { buildId: 'c', status: 'Inactive' as const, createTime: '2026-01-03T00:00:00.000Z' },
      { buildId: 'b', status: 'Current' as const, createTime: '2026-01-02T00:00:00.000Z' },
    ];
    expect(candidateBuildId(deployment({ currentBuildId: 'b', versions }))).toBe('c');
    expect(
      candidateBuildId(deployment({ currentBuildId: 'b', versions, ramping: { buildId: 'a', percentage: 5 } })),
    ).toBe('a');
    expect(candidateBuildId(deployment({ currentBuildId: 'b', versions: [versions[1]!] }))).toBeUndefined();
  });

  it('given versions that were Current in turn, rollback goes to the one made Current last before the present one', () => {
    const versions = [
      { buildId: 'v3', status: 'Current' as const, lastCurrentTime: '2026-01-03T00:00:00.000Z' },
      { buildId: 'v2', status: 'Draining' as const, lastCurrentTime: '2026-01-02T00:00:00.000Z' },
      { buildId: 'v1', status: 'Drained' as const, lastCurrentTime: '2026-01-01T00:00:00.000Z' },
      { buildId: 'v4', status: 'Inactive' as const },
    ];
    expect(previousCurrentBuildId(deployment({ currentBuildId: 'v3', versions }))).toBe('v2');
    // After that rollback v2 is Current (made so last): rolling back again goes forward to v3.
    const after = versions.map((v) =>
      v.buildId === 'v2' ? { ...v, status: 'Current' as const, lastCurrentTime: '2026-01-04T00:00:00.000Z' } : v,
    );
    expect(previousCurrentBuildId(deployment({ currentBuildId: 'v2', versions: after }))).toBe('v3');
    expect(previousCurrentBuildId(deployment({ currentBuildId: 'v4', versions: [versions[3]!] }))).toBeUndefined();
  });

  it('given hostile build IDs, deployment names and percentages, each is refused naming why', () => {
    expect(buildIdProblem('0-4-0+sha.abc_1')).toBeUndefined();
    expect(buildIdProblem('')).toMatch(/empty/);
    expect(buildIdProblem('a:b')).toMatch(/must not contain ":"/);
    expect(buildIdProblem('x'.repeat(481))).toMatch(/481 characters long; Temporal accepts at most 480/);
    expect(buildIdProblem('x'.repeat(480))).toBeUndefined();
    expect(buildIdProblem('__internal')).toMatch(/reserved/);
    expect(buildIdProblem("v1' OR '1'='1")).toMatch(/letters, digits/);
    expect(buildIdProblem('v1\n')).toMatch(/letters, digits/);
    expect(deploymentNameProblem('ops.example.com')).toMatch(/no "\." or ":"/);
    expect(deploymentNameProblem('homeostat-system/homeostat-worker')).toBeUndefined();
    for (const p of [0, 0.5, 99.9]) expect(() => assertRampPercent(p)).not.toThrow();
    for (const p of [100, 150, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => assertRampPercent(p)).toThrow(/a ramp is a percentage from 0/);
    }
  });

  it('given the server’s errors, each becomes a rollout error that says what to do', () => {
    const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details });
    const cases: [unknown, string | undefined, string, RegExp][] = [
      [
        grpc(5, "no Worker Deployment found with name 'ops'; does your Worker Deployment have pollers?"),
        undefined,
        'ERR_ROLLOUT_REFUSED',
        /^no deployment "ops" \(namespace "homeostat"\): no worker of it has polled yet/,
      ],
      [
        grpc(5, "build ID 'b9' not found in Worker Deployment 'ops'"),
        'b9',
        'ERR_ROLLOUT_REFUSED',
        /no worker of build "b9" has polled yet: start its workers first$/,
      ],
      [
        grpc(
          9,
          "proposed current version 'ops:b9' is missing active task queues from the current version; these would become unversioned",
        ),
        'b9',
        'ERR_ROLLOUT_REFUSED',
        /build "b9" does not poll every task queue the current version polls/,
      ],
      [grpc(9, 'conflict token mismatch'), 'b9', 'ERR_ROLLOUT_REFUSED', /changed twice while this command ran/],
      [
        grpc(9, "ManagerIdentity 'controller' is set and does not match user identity 'me'"),
        'b9',
        'ERR_ROLLOUT_REFUSED',
        /managed by another client/,
      ],
      [
        grpc(3, 'invalid version string'),
        'b9',
        'ERR_ROLLOUT_INPUT',
        /Temporal refused the request: invalid version string/,
      ],
      [grpc(8, 'too many requests'), undefined, 'ERR_ROLLOUT_REFUSED', /rate-limiting/],
      [
        grpc(14, 'connect ECONNREFUSED'),
        undefined,
        'ERR_ROLLOUT_REFUSED',
        /^Temporal did not answer .*check TEMPORAL_ADDRESS/,
      ],
    ];
    for (const [err, buildId, code, message] of cases) {
      const mapped = rolloutErrorFrom(err, target, buildId);
      expect(isRolloutError(mapped)).toBe(true);
      expect({ code: mapped.code, message: mapped.message }).toEqual({ code, message: expect.stringMatching(message) });
    }
  });

  it('given a status, the table shows one row per version with its ramp, pollers, count and drainage', () => {
    const table = formatRolloutStatus({
      ...target,
      currentBuildId: 'b2',
      ramping: { buildId: 'b3', percentage: 30 },
      lastModifierIdentity: 'homeostat-rollout@ci',
      versions: [
        { buildId: 'b3', status: 'Ramping', rampPercentage: 30, pollers: true, runningWorkflows: 4 },
        { buildId: 'b2', status: 'Current', pollers: true, runningWorkflows: 120 },
        {
          buildId: 'b1',
          status: 'Drained',
          pollers: false,
          runningWorkflows: 0,
          drainage: { status: 'Drained', lastCheckedTime: '2026-01-01T00:00:00.000Z' },
        },
      ],
      unversionedWorkflows: 0,
    });
    expect(table.split('\n')).toEqual([
      'deployment ops (namespace homeostat)   current: b2   ramping: b3 at 30%   last change by homeostat-rollout@ci',
      '',
      'BUILD  STATUS   RAMP  POLLERS  RUNNING  DRAINAGE (LAST CHECKED)             CREATED',
      'b3     Ramping  30%   yes      4        -                                   -',
      'b2     Current  -     yes      120      -                                   -',
      'b1     Drained  -     no       0        drained (2026-01-01T00:00:00.000Z)  -',
      '',
      'running workflows on no version: 0',
    ]);
    expect(
      formatRoutingChange('promote', { changed: true, currentBuildId: 'b3', previousCurrentBuildId: 'b2', checked: 7 }),
    ).toBe('promote: current b3 (was b2); compatibility check passed on 7 workflows');
  });
});
