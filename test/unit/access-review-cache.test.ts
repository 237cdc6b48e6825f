/**
 * SubjectAccessReview answers cached briefly: allowed and denied for lifetimes of their own, keyed by
 * the whole caller and the whole access, identical reviews in flight made once — with an injected
 * clock, so no test waits.
 */
import * as k8s from '@kubernetes/client-node';
import { AccessReviews } from '../../api/access-reviews';
import type { AccessRequest, Caller } from '../../api/caller';
import { ExpiringCache } from '../../api/expiring-cache';

const alice: Caller = { user: 'alice', groups: ['team-a'], uid: 'u-1', extra: { scopes: ['read'] } };
const get: AccessRequest = { verb: 'get', group: 'homeostat.dev', resource: 'apps', namespace: 'team-a', name: 'web' };

function setup(answer: (spec: k8s.V1SubjectAccessReviewSpec) => boolean) {
  let time = 1_000_000;
  const sent: k8s.V1SubjectAccessReviewSpec[] = [];
  const reviews = new AccessReviews({
    kc: new k8s.KubeConfig(),
    allowedMs: 30_000,
    deniedMs: 5_000,
    now: () => time,
    send: async (spec) => {
      sent.push(spec);
      return answer(spec);
    },
  });
  return { reviews, sent, advance: (ms: number) => (time += ms) };
}

describe('SubjectAccessReview cache', () => {
  it('given repeated requests, an allowed answer is reused for its lifetime and asked again after it', async () => {
    const { reviews, sent, advance } = setup(() => true);
    for (let i = 0; i < 10; i++) expect(await reviews.allowed(alice, get)).toBe(true);
    expect(sent).toHaveLength(1);
    advance(29_999);
    expect(await reviews.allowed(alice, get)).toBe(true);
    expect(sent).toHaveLength(1);
    advance(1);
    expect(await reviews.allowed(alice, get)).toBe(true);
    expect(sent).toHaveLength(2);
    expect(reviews.cacheHits).toBe(10);
  });

  it('given a denied answer, it is not kept longer than its lifetime: a permission granted meanwhile counts after 5 s', async () => {
    let granted = false;
    const { reviews, sent, advance } = setup(() => granted);
    expect(await reviews.allowed(alice, get)).toBe(false);
    granted = true;
    advance(4_999);
    expect(await reviews.allowed(alice, get)).toBe(false);
    expect(sent).toHaveLength(1);
    advance(1);
    expect(await reviews.allowed(alice, get)).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('given a caller differing in any of user, groups, uid or extra, or an access differing in any field, it is a review of its own', async () => {
    const { reviews, sent } = setup(() => true);
    await reviews.allowed(alice, get);
    const callers: Caller[] = [
      { ...alice, user: 'mallory' },
      { ...alice, groups: ['team-a', 'system:masters'] },
      { ...alice, uid: 'u-2' },
      { ...alice, extra: { scopes: ['write'] } },
      { user: 'alice', groups: ['team-a'] },
    ];
    for (const c of callers) await reviews.allowed(c, get);
    const accesses: AccessRequest[] = [
      { ...get, verb: 'reconcile' },
      { ...get, group: 'other.dev' },
      { ...get, resource: 'postgresdatabases' },
      { ...get, namespace: 'team-b' },
      { ...get, name: 'db' },
      { verb: 'get', group: 'homeostat.dev', resource: 'apps' },
    ];
    for (const a of accesses) await reviews.allowed(alice, a);
    expect(sent).toHaveLength(1 + callers.length + accesses.length);
    expect(sent[0]).toEqual({
      user: 'alice',
      groups: ['team-a'],
      uid: 'u-1',
      extra: { scopes: ['read'] },
      resourceAttributes: { verb: 'get', group: 'homeostat.dev', resource: 'apps', namespace: 'team-a', name: 'web' },
    });
  });

  it('given concurrent identical requests, one review is made; a failed review is not cached', async () => {
    let fail = true;
    const { reviews, sent } = setup(() => {
      if (fail) throw new Error('API server unavailable');
      return true;
    });
    await expect(reviews.allowed(alice, get)).rejects.toThrow(/unavailable/);
    fail = false;
    const answers = await Promise.all(Array.from({ length: 20 }, () => reviews.allowed(alice, get)));
    expect(answers.every(Boolean)).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('given more answers than the bound, the least recently used go first', () => {
    const cache = new ExpiringCache<number>({ maxEntries: 2, now: () => 0 });
    cache.set('a', 1, 1000);
    cache.set('b', 2, 1000);
    cache.get('a');
    cache.set('c', 3, 1000);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    cache.set('d', 4, 0);
    expect(cache.get('d')).toBeUndefined();
  });
});
