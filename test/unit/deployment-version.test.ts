/**
 * The worker's Worker Deployment Version: the deployment name from the operator and task queue, the
 * build ID from the versions and the bundle, the overrides from the environment, and the clear errors
 * for values Temporal would refuse.
 */
import { parseEnv } from '../../config';
import { workerEnvSchema } from '../../workers/config';
import {
  buildIdFor,
  bundleHashOf,
  deploymentNameFor,
  homeostatVersion,
  resolveDeploymentVersion,
} from '../../workers/deployment-version';
import { workerVersioningFrom } from '../../workers/run-worker';
import { workflowCodeVersion } from '../../core/workflow-code-version';
import { defineOperator } from '../../reconcilers';
import { builtinOperator } from '../../builtin';
import packageJson from '../../package.json';

const bundle = { code: 'workflow code' };

describe('deployment version', () => {
  it('given the default task queue, it names the deployment after the operator; on another queue, after both', () => {
    expect(deploymentNameFor('platform')).toBe('platform');
    expect(deploymentNameFor('platform', 'homeostat')).toBe('platform');
    expect(deploymentNameFor('platform', 'team-a')).toBe('platform-team-a');
  });

  it('given characters Temporal refuses in a deployment name, it maps them', () => {
    expect(deploymentNameFor('foo.example.com', 'q:1')).toBe('foo-example-com-q-1');
    expect(deploymentNameFor('__x')).toBe('x');
    const long = deploymentNameFor('a'.repeat(600));
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(480);
    expect(long).not.toBe(deploymentNameFor(`${'a'.repeat(599)}b`));
  });

  it('given the versions and the bundle, it derives the build ID, with the operator version only when it has one', () => {
    const hash = bundleHashOf(bundle);
    expect(hash).toMatch(/^[0-9a-f]{12}$/);
    expect(buildIdFor({ operatorVersion: '1.2.0', bundleHash: hash })).toBe(
      `op1.2.0-hs${homeostatVersion}-w${workflowCodeVersion}-${hash}`,
    );
    expect(buildIdFor({ bundleHash: hash })).toBe(`hs${homeostatVersion}-w${workflowCodeVersion}-${hash}`);
    expect(bundleHashOf({ code: 'other code' })).not.toBe(hash);
    expect(homeostatVersion).toBe(packageJson.version);
  });

  it('given an operator with a version, its workers resolve to its deployment and build', () => {
    const operator = { ...builtinOperator, name: 'platform', version: '2.0.1' };
    expect(resolveDeploymentVersion({ operator, workflowBundle: bundle })).toEqual({
      deploymentName: 'platform',
      buildId: `op2.0.1-hs${homeostatVersion}-w${workflowCodeVersion}-${bundleHashOf(bundle)}`,
    });
  });

  it('given an override Temporal would refuse, it throws an error naming each problem', () => {
    expect(() =>
      resolveDeploymentVersion({ operator: { name: 'x' }, workflowBundle: bundle, deploymentName: 'a.b:c' }),
    ).toThrow(/deployment name contains ':'.*deployment name contains '\.'/);
    expect(() => resolveDeploymentVersion({ operator: { name: 'x' }, workflowBundle: bundle, buildId: '__b' })).toThrow(
      /build ID starts with '__'/,
    );
  });

  it('given the environment, it reads the overrides (HOMEOSTAT_* over TEMPORAL_*), the opt-out and the rollout mode', () => {
    const parse = (env: Record<string, string>) =>
      workerVersioningFrom(parseEnv('worker', workerEnvSchema, { HOME: '/nonexistent', ...env }).config);
    expect(parse({})).toEqual({ rollout: 'manual' });
    expect(
      parse({ TEMPORAL_DEPLOYMENT_NAME: 'twd', TEMPORAL_WORKER_BUILD_ID: 'abc', HOMEOSTAT_BUILD_ID: 'mine' }),
    ).toEqual({ rollout: 'manual', deploymentName: 'twd', buildId: 'mine' });
    expect(parse({ HOMEOSTAT_ROLLOUT: 'auto' })).toEqual({ rollout: 'auto' });
    expect(parse({ HOMEOSTAT_WORKER_VERSIONING: 'false', HOMEOSTAT_BUILD_ID: 'x' })).toBe(false);
    expect(() => parse({ HOMEOSTAT_DEPLOYMENT_NAME: 'my.operator', HOMEOSTAT_ROLLOUT: 'sometimes' })).toThrow(
      /HOMEOSTAT_DEPLOYMENT_NAME: the deployment name contains '\.'[\s\S]*HOMEOSTAT_ROLLOUT/,
    );
    expect(() => parse({ HOMEOSTAT_WORKER_VERSIONING: 'no' })).toThrow(
      /HOMEOSTAT_WORKER_VERSIONING must be true or false/,
    );
  });

  it('given a malformed operator version, defineOperator refuses it', () => {
    expect(() => defineOperator({ name: 'platform', version: '1.0:beta', reconcilers: [] as never[] })).toThrow(
      /operator version "1.0:beta"/,
    );
  });
});
