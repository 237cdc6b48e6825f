/**
 * The approval rules of the built-in `PostgresDatabase` (`core/approval.ts`): what its `PostgresServer`
 * asks to be approved before it happens (`spec.approvals`, off by default). Dropping a database on
 * deletion (`deletionPolicy: Delete`) waits for an approver when the server sets `dropDatabases`.
 */
import type { ApprovalFacts } from '../../reconcilers';
import type { PostgresDatabaseSpec } from './schema';

/** What a `PostgresServer` asks approval for, as its spec says it. */
interface ServerApprovals {
  readonly dropDatabases?: boolean;
}

/** The `drop` cleanup step's rule: a database it would drop, on a server that requires approval for it. */
export async function dropApproval(facts: ApprovalFacts<PostgresDatabaseSpec>): Promise<string | undefined> {
  const { spec, observed, read } = facts;
  if (spec.deletionPolicy === 'Retain') return undefined;
  const drops = observed.changes.filter((c) => c.target.startsWith('database '));
  if (drops.length === 0) return undefined;
  const server = await read<{ apiVersion: string; kind: string; spec?: { approvals?: ServerApprovals } }>({
    apiVersion: 'homeostat.dev/v1alpha1',
    kind: 'PostgresServer',
    metadata: { name: spec.serverRef.name },
  });
  if (server?.spec?.approvals?.dropDatabases !== true) return undefined;
  return `PostgresServer ${spec.serverRef.name} requires approval to drop databases (${drops.map((d) => d.target).join(', ')})`;
}
