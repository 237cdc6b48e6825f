/**
 * The approval rules of the built-in `PostgresDatabase` (`core/approval.ts`): what its `PostgresServer`
 * asks to be approved before it happens (`spec.approvals`, off by default). Dropping a database on
 * deletion (`deletionPolicy: Delete`) waits for an approver when the server sets `dropDatabases`;
 * lowering a connection limit, when it sets `lowerConnectionLimits`. Each reads the server before
 * the preview, so a server without the gate costs a pass no dry run.
 */
import type { ApprovalFacts } from '../../reconcilers';
import type { PostgresDatabaseSpec } from './schema';

/** What a `PostgresServer` asks approval for, as its spec says it. */
interface ServerApprovals {
  readonly dropDatabases?: boolean;
  readonly lowerConnectionLimits?: boolean;
}

/** The server `spec.serverRef` names, as the rule reads it (confined as a step's read). */
async function serverApprovals(facts: ApprovalFacts<PostgresDatabaseSpec>): Promise<ServerApprovals | undefined> {
  const server = await facts.read<{ apiVersion: string; kind: string; spec?: { approvals?: ServerApprovals } }>({
    apiVersion: 'homeostat.dev/v1alpha1',
    kind: 'PostgresServer',
    metadata: { name: facts.spec.serverRef.name },
  });
  return server?.spec?.approvals;
}

/**
 * The `role` step's rule: a connection limit it would lower (on the role; the `database` step then
 * lowers the database's to the same value), on a server that requires approval for it. The server is
 * read first: the preview (a read-only catalog session) runs only when the server asks for the gate.
 */
export async function lowerLimitApproval(facts: ApprovalFacts<PostgresDatabaseSpec>): Promise<string | undefined> {
  if ((await serverApprovals(facts))?.lowerConnectionLimits !== true) return undefined;
  const lowered = facts.observed.changes.filter((c) => c.action === 'lower');
  if (lowered.length === 0) return undefined;
  return (
    `PostgresServer ${facts.spec.serverRef.name} requires approval to lower connection limits ` +
    `(${lowered.map((c) => `${c.target}: ${c.detail ?? ''}`).join(', ')})`
  );
}

/** The `drop` cleanup step's rule: a database it would drop, on a server that requires approval for it. */
export async function dropApproval(facts: ApprovalFacts<PostgresDatabaseSpec>): Promise<string | undefined> {
  const { spec } = facts;
  if (spec.deletionPolicy === 'Retain') return undefined;
  if ((await serverApprovals(facts))?.dropDatabases !== true) return undefined;
  const drops = facts.observed.changes.filter((c) => c.target.startsWith('database '));
  if (drops.length === 0) return undefined;
  return `PostgresServer ${spec.serverRef.name} requires approval to drop databases (${drops.map((d) => d.target).join(', ')})`;
}
