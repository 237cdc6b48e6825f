/**
 * A set of `PostgresDatabase` objects reconciled by homeostat during a fault, and the checks made
 * afterwards: every object converged to its last generation (status.observedGeneration =
 * metadata.generation, phase Ready, condition Ready=True); PostgreSQL holds what the last generation
 * asks for (owner, connection limit); each database and role was created exactly once (counted in the
 * server's statement log: CREATE statements minus those that failed, and the same OID all along);
 * and after deletion every object is gone (no finalizer stuck) and its database and role dropped.
 */
import * as k8s from '@kubernetes/client-node';
import { stateQuery, workflowIdFor } from '../../../core/definitions';
import type { FaultEnv } from './fault-env';
import { serverSecretName } from './fault-env';
import { waitUntil } from './processes';

const api = { group: 'homeostat.dev', version: 'v1alpha1', plural: 'postgresdatabases' };

/** A PostgresDatabase as the checks read it. */
export interface DatabaseObject {
  metadata: k8s.V1ObjectMeta;
  spec: { databaseName: string; ownerRole: string; connectionLimit?: number };
  status?: {
    observedGeneration?: number;
    phase?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

interface Tracked {
  readonly name: string;
  readonly databaseName: string;
  readonly ownerRole: string;
  connectionLimit: number;
  /** Created with a spec homeostat must refuse (phase Invalid, nothing created in PostgreSQL). */
  readonly invalid: boolean;
  databaseOid?: number;
  roleOid?: number;
}

/** What {@link Databases.verify} found. */
export interface Verdict {
  readonly objects: number;
  readonly converged: number;
  /** Objects whose database and role were each created exactly once, with the spec's settings (invalid ones: never). */
  readonly exactlyOnce: number;
  /** Invalid objects showing phase Invalid with a reason and message. */
  readonly invalidReported: number;
  readonly invalid: number;
  readonly problems: string[];
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Counts successful executions of statements starting with `prefix` in a PostgreSQL log. */
export function successfulStatements(log: string, prefix: string): number {
  const p = escapeRe(prefix);
  const run = log.match(new RegExp(`LOG:  statement: ${p}`, 'g'))?.length ?? 0;
  // A failed statement is logged again after its ERROR/FATAL line (log_min_error_statement = error).
  const failed = log.match(new RegExp(`STATEMENT:  ${p}`, 'g'))?.length ?? 0;
  return run - failed;
}

/** PostgresDatabase objects of one fault, named `<prefix>-<n>`. */
export class Databases {
  private readonly tracked = new Map<string, Tracked>();
  private next = 0;

  constructor(
    private readonly env: FaultEnv,
    readonly prefix: string,
  ) {}

  /** Names of the objects created so far (and not deleted), invalid ones excepted. */
  get names(): string[] {
    return [...this.tracked.values()].filter((t) => !t.invalid).map((t) => t.name);
  }

  /** Names of the invalid objects. */
  get invalidNames(): string[] {
    return [...this.tracked.values()].filter((t) => t.invalid).map((t) => t.name);
  }

  /** The index the next created object gets. */
  get nextIndex(): number {
    return this.next;
  }

  /** Records a connection limit set behind the API's back (e.g. written to etcd directly). */
  expectLimit(name: string, limit: number): void {
    this.tracked.get(name)!.connectionLimit = limit;
  }

  /** The current expected connection limit of an object. */
  limitOf(name: string): number {
    return this.tracked.get(name)!.connectionLimit;
  }

  /** The role name an object will own (known before the object exists, so a test can hold a lock on it). */
  roleFor(index: number): string {
    return `${this.prefix.replace(/-/g, '_')}_${index}_owner`;
  }

  /**
   * Creates `count` objects; returns their names. With `invalid`, each spec passes the CRD's schema
   * but breaks a rule only homeostat checks (a `pg_` prefix, or a name longer than 63 bytes).
   */
  async create(count: number, invalid = false): Promise<string[]> {
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const index = this.next++;
      const name = `${this.prefix}-${index}`;
      const base = `${this.prefix.replace(/-/g, '_')}_${index}`;
      const t: Tracked = {
        name,
        databaseName: !invalid ? base : index % 2 ? `pg_${base}` : `${base}_${'x'.repeat(64)}`,
        ownerRole: this.roleFor(index),
        connectionLimit: 10,
        invalid,
      };
      await this.env.custom.createNamespacedCustomObject({
        ...api,
        namespace: this.env.namespace,
        body: {
          apiVersion: `${api.group}/${api.version}`,
          kind: 'PostgresDatabase',
          metadata: { name },
          spec: {
            serverRef: { name: serverSecretName },
            databaseName: t.databaseName,
            ownerRole: t.ownerRole,
            connectionLimit: t.connectionLimit,
            deletionPolicy: 'Delete',
          },
        },
      });
      this.tracked.set(name, t);
      names.push(name);
    }
    return names;
  }

  /** Changes the spec of `names` (default: all): a new connection limit, so a new generation. */
  async bump(names: string[] = this.names): Promise<void> {
    for (const name of names) {
      const t = this.tracked.get(name)!;
      const limit = t.connectionLimit + 1;
      await this.patchSpec(name, { connectionLimit: limit });
      t.connectionLimit = limit;
    }
  }

  /** Merge-patches an object's spec (a new generation); the caller's expectations are its business. */
  async patchSpec(name: string, spec: Record<string, unknown>): Promise<DatabaseObject> {
    return (await this.env.custom.patchNamespacedCustomObject(
      { ...api, namespace: this.env.namespace, name, body: { spec } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as DatabaseObject;
  }

  async get(name: string): Promise<DatabaseObject | undefined> {
    try {
      return (await this.env.custom.getNamespacedCustomObject({
        ...api,
        namespace: this.env.namespace,
        name,
      })) as DatabaseObject;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  /** Whether an object's status shows its current generation Ready. */
  static isConverged(obj: DatabaseObject | undefined): boolean {
    return (
      obj !== undefined &&
      obj.status?.observedGeneration === obj.metadata.generation &&
      obj.status?.phase === 'Ready' &&
      obj.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
    );
  }

  /** How many of `names` (default: all) have converged to their current generation. */
  async countConverged(names: string[] = this.names): Promise<number> {
    let n = 0;
    for (const name of names) if (Databases.isConverged(await this.get(name))) n++;
    return n;
  }

  /** Whether the object's workflow is idle: no pass running, none waiting. */
  async workflowIdle(name: string): Promise<boolean> {
    const id = workflowIdFor({ group: api.group, kind: 'PostgresDatabase', namespace: this.env.namespace, name });
    const state = await this.env.temporal.workflow.getHandle(id).query(stateQuery);
    return !state.reconciling && !state.pending;
  }

  /**
   * Waits until every object (or `names`) has converged and its workflow is idle (so no pass still in
   * flight can change the status afterwards); throws naming the laggards after `timeoutMs`.
   */
  async waitConverged(timeoutMs = 240_000, names: string[] = this.names): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lagging: string[] = [];
      for (const name of names) {
        const obj = await this.get(name).catch(() => undefined);
        const idle = Databases.isConverged(obj) && (await this.workflowIdle(name).catch(() => false));
        if (!idle) {
          lagging.push(
            `${name}: gen ${obj?.metadata.generation} observed ${obj?.status?.observedGeneration} ${obj?.status?.phase} ` +
              `(workflow ${Databases.isConverged(obj) ? 'busy' : 'not checked'}) ` +
              `${obj?.status?.conditions?.find((c) => c.type === 'Ready' || c.type === 'Degraded')?.message ?? ''}`,
          );
        }
      }
      if (lagging.length === 0) return;
      if (Date.now() > deadline) throw new Error(`not converged after ${timeoutMs} ms:\n  ${lagging.join('\n  ')}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** Waits until every invalid object reports phase Invalid for its current generation. */
  async waitInvalid(timeoutMs = 120_000): Promise<void> {
    await waitUntil(
      'invalid objects to report phase Invalid',
      async () => {
        for (const name of this.invalidNames) {
          const obj = await this.get(name);
          if (obj?.status?.phase !== 'Invalid' || obj.status.observedGeneration !== obj.metadata.generation)
            return false;
        }
        return true;
      },
      timeoutMs,
      500,
    );
  }

  /**
   * Checks convergence and PostgreSQL: the database and role of every object exist with the spec's
   * owner and connection limit, with the OID first seen (never dropped and recreated), and the server
   * log shows exactly one successful CREATE of each.
   */
  async verify(): Promise<Verdict> {
    const problems: string[] = [];
    let converged = 0;
    let exactlyOnce = 0;
    let invalidReported = 0;
    const log = this.env.postgresLog();
    for (const t of this.tracked.values()) {
      const obj = await this.get(t.name);
      if (t.invalid) {
        const reported =
          obj?.status?.phase === 'Invalid' &&
          obj.status.observedGeneration === obj.metadata.generation &&
          obj.status.conditions?.some((c) => c.status === 'False' && c.reason.length > 0 && c.message.length > 0);
        const touched =
          log.includes(`CREATE DATABASE "${t.databaseName}"`) || log.includes(`CREATE ROLE "${t.ownerRole}"`);
        if (reported) invalidReported++;
        else problems.push(`${t.name} (invalid) not reported Invalid: ${JSON.stringify(obj?.status)}`);
        if (touched) problems.push(`${t.name} (invalid) touched PostgreSQL`);
        continue;
      }
      if (Databases.isConverged(obj)) converged++;
      else problems.push(`${t.name} not converged: ${JSON.stringify(obj?.status)}`);
      const db = await this.env.pg.query<{ oid: number; owner: string; limit: number }>(
        `SELECT d.oid::int AS oid, r.rolname AS owner, d.datconnlimit AS limit
         FROM pg_database d JOIN pg_roles r ON r.oid = d.datdba WHERE d.datname = $1`,
        [t.databaseName],
      );
      const role = await this.env.pg.query<{ oid: number }>('SELECT oid::int AS oid FROM pg_roles WHERE rolname = $1', [
        t.ownerRole,
      ]);
      const dbRow = db.rows[0];
      const roleRow = role.rows[0];
      const creates = successfulStatements(log, `CREATE DATABASE "${t.databaseName}" `);
      const roleCreates = successfulStatements(log, `CREATE ROLE "${t.ownerRole}" LOGIN`);
      const ok: boolean[] = [
        dbRow !== undefined && db.rows.length === 1,
        roleRow !== undefined,
        dbRow?.owner === t.ownerRole,
        dbRow?.limit === t.connectionLimit,
        creates === 1,
        roleCreates === 1,
        t.databaseOid === undefined || t.databaseOid === dbRow?.oid,
        t.roleOid === undefined || t.roleOid === roleRow?.oid,
      ];
      if (ok.every(Boolean)) exactlyOnce++;
      else {
        problems.push(
          `${t.name}: database ${JSON.stringify(dbRow)} (oid before ${t.databaseOid}, wanted limit ${t.connectionLimit}), ` +
            `role oid ${roleRow?.oid} (before ${t.roleOid}), CREATE DATABASE ×${creates}, CREATE ROLE ×${roleCreates}`,
        );
      }
      t.databaseOid ??= dbRow?.oid;
      t.roleOid ??= roleRow?.oid;
    }
    const invalid = this.invalidNames.length;
    return { objects: this.tracked.size - invalid, converged, exactlyOnce, invalidReported, invalid, problems };
  }

  /**
   * Deletes every object and waits until each is gone (homeostat's finalizer removed after cleanup)
   * and its database and role are dropped. Returns how many objects were left (0: no finalizer stuck).
   */
  async deleteAll(timeoutMs = 180_000): Promise<{ stuck: string[]; leftInPostgres: string[] }> {
    const all = [...this.tracked.values()];
    for (const t of all) {
      await this.env.custom.deleteNamespacedCustomObject({ ...api, namespace: this.env.namespace, name: t.name });
    }
    const stuck: string[] = [];
    try {
      await waitUntil(
        'deleted objects to disappear',
        async () => {
          stuck.length = 0;
          for (const t of all) {
            const obj = await this.get(t.name);
            if (obj) stuck.push(`${t.name} (finalizers ${JSON.stringify(obj.metadata.finalizers)})`);
          }
          return stuck.length === 0;
        },
        timeoutMs,
        500,
      );
    } catch {
      // reported through `stuck`
    }
    const leftInPostgres: string[] = [];
    for (const t of all) {
      const db = await this.env.pg.query('SELECT 1 FROM pg_database WHERE datname = $1', [t.databaseName]);
      const role = await this.env.pg.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [t.ownerRole]);
      if (db.rowCount) leftInPostgres.push(t.databaseName);
      if (role.rowCount) leftInPostgres.push(t.ownerRole);
    }
    for (const t of all) if (!stuck.some((s) => s.startsWith(`${t.name} `))) this.tracked.delete(t.name);
    return { stuck, leftInPostgres };
  }
}
