import { passPriorityKey, passPriorityKeys } from '../../workflows/pass-priority';

describe('the priority of a pass’s steps', () => {
  it.each([
    ['a reconcile-now update (the API)', { byUpdate: true, reason: 'resync' }, passPriorityKeys.requested],
    ['a change of the object', { byUpdate: false, reason: 'updated' }, passPriorityKeys.change],
    ['a new object', { byUpdate: false, reason: 'added' }, passPriorityKeys.change],
    ['a deletion', { byUpdate: false, reason: 'deleted' }, passPriorityKeys.change],
    ['a child’s change', { byUpdate: false, reason: 'child-changed' }, passPriorityKeys.change],
    ['a referenced object’s change', { byUpdate: false, reason: 'referenced-changed' }, passPriorityKeys.change],
    ['an API request by signal', { byUpdate: false, reason: 'api' }, passPriorityKeys.change],
    ['the requeue timer', { byUpdate: false, timerKind: 'requeue' as const }, passPriorityKeys.normal],
    ['the drift timer', { byUpdate: false, timerKind: 'drift' as const }, passPriorityKeys.background],
    ['the bridge’s resync', { byUpdate: false, reason: 'resync' }, passPriorityKeys.background],
    ['nothing known (a carried pass)', { byUpdate: false }, passPriorityKeys.normal],
  ])('given %s, it is %s', (_what, trigger, key) => {
    expect(passPriorityKey(trigger)).toBe(key);
  });

  it('given the keys, someone waiting comes first and background checks last, inside Temporal’s default 1–5', () => {
    const { requested, change, normal, background } = passPriorityKeys;
    expect([requested, change, normal, background]).toEqual([1, 2, 3, 4]);
  });
});
