import { parseStaticTokens } from '../../api/auth';

describe('HOMEOSTAT_API_STATIC_TOKENS', () => {
  it('given groups whose names contain colons, only the first colon separates the user from the groups', () => {
    expect(parseStaticTokens('abcdefghijklmnopq=admin:system:masters,ops; rstuvwxyz0123456=viewer')).toEqual([
      { token: 'abcdefghijklmnopq', user: 'admin', groups: ['system:masters', 'ops'] },
      { token: 'rstuvwxyz0123456', user: 'viewer', groups: [] },
    ]);
  });

  it('given a short token or no user, it refuses', () => {
    expect(() => parseStaticTokens('short=me')).toThrow(/16\+ characters/);
    expect(() => parseStaticTokens('abcdefghijklmnopq=')).toThrow(/user name/);
  });
});
