import { clusterFairnessKey, fairnessKeyFor, objectPriority, parseFairnessWeights } from '../../core/fairness';
import { objectWorkflowStartOptions } from '../../core/definitions';
import { fairnessModeEnv, fairnessSetting } from '../../config/fairness-weights';

describe('fairness keys and weights', () => {
  const ref = { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: 'team-a', name: 'web' };

  it('given a namespaced object, its workflow is started with its namespace as fairness key; a cluster-scoped one with _cluster', () => {
    expect(objectWorkflowStartOptions(ref).priority).toEqual({ fairnessKey: 'team-a' });
    expect(fairnessKeyFor({ namespace: '' })).toBe(clusterFairnessKey);
    expect(objectPriority({}, { _cluster: 0.5 })).toEqual({ fairnessKey: '_cluster', fairnessWeight: 0.5 });
  });

  it('given weights, the named namespace carries its weight and the others none (1 by default)', () => {
    const weights = parseFairnessWeights(' team-a=2, batch=0.25 ,');
    expect(weights).toEqual({ 'team-a': 2, batch: 0.25 });
    expect(objectWorkflowStartOptions(ref, 'q', weights).priority).toEqual({
      fairnessKey: 'team-a',
      fairnessWeight: 2,
    });
    expect(objectPriority({ namespace: 'team-b' }, weights)).toEqual({ fairnessKey: 'team-b' });
    expect(parseFairnessWeights('')).toEqual({});
  });

  it('given HOMEOSTAT_FAIRNESS=off, workflows start with no priority at all; unset, with the namespace key', () => {
    expect(fairnessModeEnv.parse(undefined)).toBe('namespace');
    expect(fairnessSetting(fairnessModeEnv.parse('off'), { 'team-a': 2 })).toBe(false);
    expect(objectWorkflowStartOptions(ref, 'q', false)).not.toHaveProperty('priority');
    expect(objectWorkflowStartOptions(ref, 'q', fairnessSetting('namespace', {})).priority).toEqual({
      fairnessKey: 'team-a',
    });
    expect(() => fairnessModeEnv.parse('sometimes')).toThrow();
  });

  it.each([
    ['no weight', 'team-a', /names no namespace/],
    ['an invalid namespace', 'Team_A=2', /names no namespace/],
    ['a namespace over 63 characters', `${'a'.repeat(64)}=2`, /names no namespace/],
    ['a weight of 0', 'team-a=0', /from 0.001 to 1000/],
    ['a huge weight', 'team-a=1e9', /from 0.001 to 1000/],
    ['a negative weight', 'team-a=-1', /from 0.001 to 1000/],
    ['not a number', 'team-a=lots', /from 0.001 to 1000/],
  ])('given %s, it refuses the setting with a clear message', (_what, text, message) => {
    expect(() => parseFairnessWeights(text)).toThrow(message);
  });
});
