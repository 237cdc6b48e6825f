import { imageRepository, imageRepositoryApproval } from '../../builtin/app/approvals';
import { appSpec } from '../../builtin/app/schema';

describe('the App’s image repository rule', () => {
  it('given image references with tags, digests and registry ports, it keeps the repository only', () => {
    expect(imageRepository('nginx')).toBe('nginx');
    expect(imageRepository('nginx:1.27')).toBe('nginx');
    expect(imageRepository('registry.test:5000/team/web')).toBe('registry.test:5000/team/web');
    expect(imageRepository('registry.test:5000/team/web:v2')).toBe('registry.test:5000/team/web');
    expect(imageRepository(`team/web:v2@sha256:${'a'.repeat(64)}`)).toBe('team/web');
  });

  it('given the gate off, or a change of tag only, it asks nothing; given another repository, it asks', () => {
    const facts = (approvals: boolean, from: string, to: string) => ({
      spec: appSpec.parse({ image: to, approvals: { imageRepository: approvals } }),
      deleting: false,
      read: () => Promise.resolve(undefined),
      observed: {
        changes: [],
        children: [
          {
            kind: 'Deployment',
            apiVersion: 'apps/v1',
            name: 'web',
            action: 'update' as const,
            fields: [{ path: 'spec.template.spec.containers[0].image', old: from, new: to }],
          },
        ],
      },
    });
    expect(imageRepositoryApproval(facts(false, 'a/web:v1', 'b/web:v1'))).toBeUndefined();
    expect(imageRepositoryApproval(facts(true, 'a/web:v1', 'a/web:v2'))).toBeUndefined();
    expect(imageRepositoryApproval(facts(true, 'a/web:v1', 'b/web:v1'))).toContain('from a/web to b/web');
    expect(appSpec.parse({ image: 'x' }).approvals).toEqual({ imageRepository: false });
  });
});
