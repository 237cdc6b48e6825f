/**
 * The rule that confines a step's reads (core/read-scope.ts, issue 31): its own namespace, plus what
 * the reconciler declares; never Secrets in any namespace; malformed declarations refused when defined.
 */
import { z } from 'zod';
import { readDeclarationProblems, readRefusal } from '../../core/read-scope';
import type { ReadDeclaration } from '../../core/reconciler';
import { definePlan, defineReconciler } from '../../reconcilers';

const secret = (namespace: string) => ({ group: '', kind: 'Secret', namespaced: true, namespace, name: 's' });

describe('read scope', () => {
  it('given no declarations, a namespaced object reads its own namespace only, and no cluster-scoped kind', () => {
    expect(readRefusal('team-a', [], secret('team-a'))).toBeUndefined();
    expect(readRefusal('team-a', [], secret('team-b'))).toMatch(/read only in its own namespace \(team-a\)/);
    expect(readRefusal('team-a', [], { group: '', kind: 'Namespace', namespaced: false, name: 'x' })).toMatch(
      /cluster-scoped/,
    );
  });

  it('given a cluster-scoped object, every read needs a declaration', () => {
    expect(readRefusal(undefined, [], secret('team-a'))).toMatch(/declares no reads of Secret in team-a/);
    const reads: ReadDeclaration[] = [{ apiVersion: 'v1', kind: 'Secret', scope: { namespace: 'team-a' } }];
    expect(readRefusal(undefined, reads, secret('team-a'))).toBeUndefined();
  });

  it('given declarations, each allows exactly its scope, for its group and kind', () => {
    const reads: ReadDeclaration[] = [
      { apiVersion: 'v1', kind: 'Secret', scope: { namespace: 'homeostat-system' } },
      { apiVersion: 'v1', kind: 'ConfigMap', scope: 'anyNamespace' },
      { apiVersion: 'homeostat.dev/v1alpha1', kind: 'PostgresServer', scope: 'cluster' },
    ];
    expect(readRefusal('team-a', reads, secret('homeostat-system'))).toBeUndefined();
    expect(readRefusal('team-a', reads, secret('team-b'))).toBeDefined();
    expect(readRefusal('team-a', reads, { ...secret('team-b'), kind: 'ConfigMap' })).toBeUndefined();
    expect(readRefusal('team-a', reads, { ...secret('team-b'), kind: 'ConfigMap', group: 'other.io' })).toBeDefined();
    const server = { group: 'homeostat.dev', kind: 'PostgresServer', namespaced: false, name: 'main' };
    expect(readRefusal('team-a', reads, server)).toBeUndefined();
    expect(readRefusal('team-a', reads, { ...server, group: 'evil.io' })).toBeDefined();
  });

  it('given Secrets declared in any namespace, or a malformed declaration, defineReconciler refuses it naming the problem', () => {
    expect(readDeclarationProblems([{ apiVersion: 'v1', kind: 'Secret', scope: 'anyNamespace' }])).toEqual([
      expect.stringMatching(/Secrets cannot be read in any namespace/),
    ]);
    expect(
      readDeclarationProblems([
        { apiVersion: 'v1', kind: 'ConfigMap', scope: 'everywhere' as never },
        { apiVersion: 'v1', kind: 'ConfigMap', scope: { namespace: 'Not_A_Namespace' } },
      ]),
    ).toEqual([
      expect.stringMatching(/^reads\[0\]: scope must be/),
      expect.stringMatching(/^reads\[1\]: .*not a namespace/),
    ]);
    const plan = definePlan({
      group: 'x.example.com',
      version: 'v1',
      kind: 'X',
      plural: 'xs',
      scope: 'Namespaced',
      steps: [{ name: 'a' }],
    });
    expect(() =>
      defineReconciler({
        plan,
        schema: z.object({}),
        steps: { a: async () => {} },
        reads: [{ apiVersion: 'v1', kind: 'Secret', scope: 'anyNamespace' }],
      }),
    ).toThrow(/X: reads\[0\]: Secrets cannot be read in any namespace/);
  });
});
