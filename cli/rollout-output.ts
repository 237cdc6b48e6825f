/** What `homeostat rollout` prints: the versions table of `status` and one line per routing change or wake. */
import type { RolloutStatus, RoutingChange, WakeResult } from '../core/rollout';

const dash = '-';

/** The versions of a deployment as a table, with the routing above it and the unversioned count below. */
export function formatRolloutStatus(s: RolloutStatus): string {
  const head = [
    `deployment ${s.deploymentName} (namespace ${s.namespace})`,
    `current: ${s.currentBuildId ?? 'unversioned'}`,
    ...(s.ramping ? [`ramping: ${s.ramping.buildId} at ${s.ramping.percentage}%`] : []),
    ...(s.routingUpdate === 'in-progress' ? ['routing: propagating to task queues'] : []),
    ...(s.lastModifierIdentity ? [`last change by ${s.lastModifierIdentity}`] : []),
  ].join('   ');
  const rows = [
    ['BUILD', 'STATUS', 'RAMP', 'POLLERS', 'RUNNING', 'DRAINAGE (LAST CHECKED)', 'CREATED'],
    ...s.versions.map((v) => [
      v.buildId,
      v.status,
      v.rampPercentage !== undefined ? `${v.rampPercentage}%` : dash,
      v.pollers === undefined ? '?' : v.pollers ? 'yes' : 'no',
      String(v.runningWorkflows),
      v.drainage ? `${v.drainage.status.toLowerCase()} (${v.drainage.lastCheckedTime ?? 'never'})` : dash,
      v.createTime ?? dash,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const table = rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  const empty = s.versions.length === 0 ? ['(no versions: no versioned worker has polled)'] : [];
  return [head, '', ...table, ...empty, '', `running workflows on no version: ${s.unversionedWorkflows}`].join('\n');
}

/** One line saying what a routing command did. */
export function formatRoutingChange(verb: string, c: RoutingChange): string {
  if (!c.changed) return `${verb}: nothing to change (current ${c.currentBuildId ?? 'unversioned'})`;
  const checked = c.checked !== undefined ? `; compatibility check passed on ${c.checked} workflows` : '';
  const routing = c.ramping
    ? `${c.ramping.buildId} ramping at ${c.ramping.percentage}%, current ${c.currentBuildId ?? 'unversioned'}`
    : `current ${c.currentBuildId ?? 'unversioned'} (was ${c.previousCurrentBuildId ?? 'unversioned'})`;
  return `${verb}: ${routing}${checked}`;
}

/** The summary of a wake. */
export function formatWake(w: WakeResult): string {
  const lines = [
    `woke ${w.signalled} of ${w.listed} workflows onto ${w.currentBuildId} in ${(w.elapsedMs / 1000).toFixed(1)} s` +
      (w.queried ? ` (${w.queried} needed a state query)` : ''),
    ...(w.routingConfirmedBy === 'task-queues'
      ? [
          '  the server still reports the routing as propagating; every workflow task queue of the Current version names it Current, so the wake went on (a run that did not move moves at its next drift check)',
        ]
      : []),
    ...w.skipped.slice(0, 10).map((s) => `  skipped ${s.workflowId}: ${s.reason}`),
    ...w.failed.slice(0, 10).map((f) => `  failed ${f.workflowId}: ${f.error}`),
  ];
  if (w.skipped.length + w.failed.length > 20)
    lines.push(`  … (${w.skipped.length} skipped, ${w.failed.length} failed)`);
  return lines.join('\n');
}
