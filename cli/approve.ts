/**
 * `homeostat approve|reject KIND NS/NAME [--comment …]` and `homeostat pending`: decisions on steps
 * that wait for approval (`POST …/approve`, `POST …/reject`; the RBAC verb `approve`), and every object
 * awaiting one, from Temporal visibility (the list of each kind the API serves, phase
 * `AwaitingApproval`), with the step, reason and previewed change each waits on.
 */
import { type ApiTarget, call, objectPath, resolveKind, splitName, table } from './client';

interface Awaiting {
  step: string;
  generation: number;
  reason: string;
  preview: string;
  deadline: string;
}

/** `homeostat approve|reject`: sends the decision, optionally for the generation the caller reviewed. */
export async function decideCommand(
  target: ApiTarget,
  decision: 'approve' | 'reject',
  kind: string,
  arg: string,
  options: { comment?: string; generation?: number },
  json: boolean,
): Promise<string> {
  const plan = await resolveKind(target, kind);
  const { namespace, name } = splitName(arg);
  const body = {
    ...(options.comment !== undefined ? { comment: options.comment } : {}),
    ...(options.generation !== undefined ? { generation: options.generation } : {}),
  };
  const res = (await call(target, 'POST', `${objectPath(plan, namespace, name)}/${decision}`, body)) as {
    step: string;
    generation: number;
    approver: string;
  };
  if (json) return JSON.stringify(res, null, 2);
  const verb = decision === 'approve' ? 'approved' : 'rejected';
  return `${plan.kind} ${namespace}/${name}: step ${res.step} of generation ${res.generation} ${verb} by ${res.approver}`;
}

/** `homeostat pending [-n NS]`: every object awaiting approval, of every kind the API serves (in one namespace). */
export async function pendingCommand(target: ApiTarget, json: boolean, namespace?: string): Promise<string> {
  const { kinds } = (await call(target, 'GET', '/v1/kinds')) as { kinds: { kind: string }[] };
  const rows: { kind: string; namespace: string; name: string; awaiting?: Awaiting }[] = [];
  for (const { kind } of kinds) {
    const plan = await resolveKind(target, kind);
    for (let page: string | undefined, first = true; first || page !== undefined; first = false) {
      const q = new URLSearchParams({
        kind,
        phase: 'AwaitingApproval',
        ...(namespace ? { namespace } : {}),
        ...(page ? { pageToken: page } : {}),
      });
      const res = (await call(target, 'GET', `/v1/objects?${q.toString()}`)) as {
        items: { namespace?: string; name?: string }[];
        nextPageToken?: string;
      };
      page = res.nextPageToken;
      for (const item of res.items) {
        const namespace = item.namespace === '_' ? '' : (item.namespace ?? '');
        const name = item.name ?? '';
        // What it waits on, from its workflow's state (the visibility record lags by a moment: skip what is no longer waiting).
        const state = (await call(target, 'GET', objectPath(plan, namespace, name)).catch(() => undefined)) as
          { state: { awaitingApproval?: Awaiting } } | undefined;
        rows.push({
          kind,
          namespace,
          name,
          ...(state?.state.awaitingApproval ? { awaiting: state.state.awaitingApproval } : {}),
        });
      }
    }
  }
  if (json) return JSON.stringify({ items: rows }, null, 2);
  return table(
    ['kind', 'namespace', 'name', 'step', 'generation', 'reason', 'would change', 'deadline'],
    rows.map((r) => [
      r.kind,
      r.namespace,
      r.name,
      r.awaiting?.step ?? '',
      String(r.awaiting?.generation ?? ''),
      r.awaiting?.reason ?? '',
      r.awaiting?.preview ?? '',
      r.awaiting?.deadline ?? '',
    ]),
  );
}
