/**
 * The connection limits of a shared PostgreSQL server (issue 31), in process: what a `PostgresServer`
 * gives each database by default and at most, what one object gets for what it asks, and the refusal
 * of a changed `databaseName` or `ownerRole`.
 */
import {
  appliedConnectionLimit,
  connectionLimitsFor,
  connectionLimitsSchema,
  postgresDatabaseSpec,
  renameRefusal,
} from '../../builtin';

const settings = { maxConnections: 100, superuserReserved: 3, reserved: 0 };

describe('connection limits of a PostgresServer', () => {
  it('given no limits in the spec, the ceiling is a quarter and the default a tenth of the connections open to ordinary roles', () => {
    expect(connectionLimitsFor({}, settings)).toEqual({ available: 97, ceiling: 24, default: 9 });
    expect(connectionLimitsFor(undefined, { maxConnections: 300, superuserReserved: 3, reserved: 7 })).toEqual({
      available: 290,
      ceiling: 72,
      default: 29,
    });
  });

  it('given a tiny server, every limit is at least 1', () => {
    expect(connectionLimitsFor({}, { maxConnections: 3, superuserReserved: 3, reserved: 0 })).toEqual({
      available: 1,
      ceiling: 1,
      default: 1,
    });
  });

  it('given limits in the spec, they are used, and a computed default never exceeds a given ceiling', () => {
    expect(connectionLimitsFor({ default: 3, ceiling: 5 }, settings)).toEqual({
      available: 97,
      ceiling: 5,
      default: 3,
    });
    expect(connectionLimitsFor({ ceiling: 4 }, settings)).toEqual({ available: 97, ceiling: 4, default: 4 });
  });

  it('given a default above the ceiling, the spec is refused', () => {
    expect(connectionLimitsSchema.safeParse({ default: 6, ceiling: 5 }).success).toBe(false);
    expect(connectionLimitsSchema.safeParse({ default: 5, ceiling: 5 }).success).toBe(true);
    expect(connectionLimitsSchema.safeParse({ default: 0 }).success).toBe(false);
  });
});

describe('the connection limit of one PostgresDatabase', () => {
  const limits = { available: 97, ceiling: 24, default: 9 };

  it.each([
    ['no limit asked', undefined, 9, 'default', "connection limit 9 (PostgresServer s's default)"],
    ['-1 (once "no limit")', -1, 9, 'default', "connection limit 9 (PostgresServer s's default)"],
    ['more than the ceiling', 500, 24, 'ceiling', "connection limit 24 (asked 500; PostgresServer s's ceiling)"],
    ['the ceiling itself', 24, 24, 'asked', 'connection limit 24'],
    ['0 (closed to its role)', 0, 0, 'asked', 'connection limit 0'],
  ])('given %s, the limit is %#', (_what, asked, limit, source, summary) => {
    expect(appliedConnectionLimit(asked, limits, 's')).toEqual({ limit, source, summary });
  });

  it('given a spec without connectionLimit, it parses with none (the server decides), and -2 is refused', () => {
    const base = { serverRef: { name: 's' }, databaseName: 'd', ownerRole: 'r' };
    expect(postgresDatabaseSpec.parse(base).connectionLimit).toBeUndefined();
    expect(postgresDatabaseSpec.safeParse({ ...base, connectionLimit: -2 }).success).toBe(false);
  });
});

describe('a changed databaseName or ownerRole', () => {
  it('given nothing created yet, or the same name, it is not refused', () => {
    expect(renameRefusal('databaseName', [], 'a')).toBeUndefined();
    expect(renameRefusal('ownerRole', ['a'], 'a')).toBeUndefined();
  });

  it('given a database or role already created under another name, it is refused naming both and the way back', () => {
    expect(renameRefusal('databaseName', ['old'], 'new')).toBe(
      'databaseName changed to new, but this object already has database old: homeostat neither renames nor ' +
        'abandons a database; set databaseName back to old, or delete this object (its deletionPolicy applies) ' +
        'and create a new one',
    );
    expect(renameRefusal('ownerRole', ['old'], 'new')).toMatch(/^ownerRole changed to new, .* has role old:/);
  });
});
