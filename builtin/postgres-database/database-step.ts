/**
 * The `database` step of `PostgresDatabase`: the database, owned by the object's role, marked with the
 * object's UID, open only to its owner (and the admin), with the connection limit the server allows.
 *
 * A shared server that one tenant cannot deny (issue 31):
 * - The database is cloned from `template0`, which accepts no connections: a tenant session held open
 *   on `template1` (which every role may connect to) cannot make `CREATE DATABASE` fail with
 *   "source database is being accessed by other users".
 * - `CONNECT` (and every other privilege) is revoked from `PUBLIC` and granted to the owner, on creation
 *   and on every drift check, so another tenant's role cannot connect; databases created by earlier
 *   versions converge on the next pass.
 * - The connection limit is never "none" (see `connection-limits.ts`); the owner can change its own
 *   database's limit, so the drift check puts it back, and the role carries the same limit (set by the
 *   `role` step), which the tenant cannot change.
 * - A changed `databaseName` is refused while this object has a database under another name.
 */
import { adoptionRefused, HomeostatError, terminal, type StepContext, type StepResult } from '../../reconcilers';
import { withAdmin } from './admin-session';
import { appliedConnectionLimit } from './connection-limits';
import {
  asOwner,
  databaseRefusal,
  markedUid,
  ownerMark,
  readDatabase,
  readMarkedNames,
  renameRefusal,
} from './ownership';
import type { PostgresDatabaseSpec } from './schema';

/** Runs the `database` step of an object whose servers' admin Secrets live in `systemNamespace`. */
export async function ensureDatabase(
  ctx: StepContext<PostgresDatabaseSpec>,
  systemNamespace: string,
): Promise<StepResult> {
  const { databaseName: name, ownerRole: owner } = ctx.spec;
  const uid = ctx.object.uid;
  return withAdmin(ctx, systemNamespace, `ensure database ${name}`, async ({ db, facts, server, limits }) => {
    const { limit, summary } = appliedConnectionLimit(ctx.spec.connectionLimit, limits, server.name);
    const ident = db.escapeIdentifier(name);
    const ownerIdent = db.escapeIdentifier(owner);
    const mark = () =>
      asOwner(db, facts, owner, () => db.query(`COMMENT ON DATABASE ${ident} IS ${db.escapeLiteral(ownerMark(uid))}`));
    // Owner-only settings: no access for other roles (PUBLIC may connect to a new database by default).
    const restrict = () =>
      asOwner(db, facts, owner, async () => {
        await db.query(`REVOKE ALL ON DATABASE ${ident} FROM PUBLIC`);
        await db.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${ident} TO ${ownerIdent}`);
        if (!facts.superuser) {
          await db.query(`GRANT CONNECT, CREATE ON DATABASE ${ident} TO ${db.escapeIdentifier(facts.user)}`);
        }
      });
    const result = (message: string): StepResult => ({
      message: `${message}; ${summary}`,
      status: { connectionLimit: limit },
    });

    const rename = renameRefusal('databaseName', (await readMarkedNames(db, uid)).databases, name);
    if (rename) throw terminal(new Error(rename));
    let row = await readDatabase(db, name);
    if (!row) {
      try {
        await db.query(`CREATE DATABASE ${ident} OWNER ${ownerIdent} TEMPLATE template0 CONNECTION LIMIT ${limit}`);
        await mark();
        await restrict();
        return result(`database ${name} created`);
      } catch (err) {
        if ((err as { code?: string }).code !== '42P04') throw err; // created concurrently: check it
      }
      row = await readDatabase(db, name);
      if (!row) throw new HomeostatError('ERR_STEP_FAILED', `database ${name} vanished while it was created`);
    }
    const refusal = databaseRefusal(row, uid, owner);
    if (refusal) throw adoptionRefused(`PostgreSQL database ${name}`, refusal);
    const fixed: string[] = [];
    if (row.owner !== owner) {
      await db.query(`ALTER DATABASE ${ident} OWNER TO ${ownerIdent}`);
      fixed.push(`owner ${row.owner} → ${owner}`);
    }
    if (markedUid(row.comment) !== uid) {
      await mark();
      fixed.push('ownership mark');
    }
    if (row.publicConnect || !row.ownerConnect || !row.adminConnect) {
      await restrict();
      fixed.push('CONNECT for its owner only');
    }
    if (row.limit !== limit) {
      await asOwner(db, facts, owner, () => db.query(`ALTER DATABASE ${ident} CONNECTION LIMIT ${limit}`));
      fixed.push(`connection limit ${row.limit} → ${limit}`);
    }
    if (fixed.length) ctx.log.info({ database: name, fixed }, 'database drift corrected');
    return result(fixed.length ? `corrected ${fixed.join(', ')}` : `database ${name} in line`);
  });
}
