/**
 * Workflow histories as committed JSON files (test/histories). The files hold protobufjs's object form
 * of `temporal.api.history.v1.History` (64-bit integers and bytes as strings), not the proto3 JSON of
 * `historyToJSON`: with this install's two copies of protobufjs (one under @temporalio/common, one
 * under @temporalio/proto), `historyToJSON` and `historyFromJSON` throw "type must be a Type".
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';

const History = temporal.api.history.v1.History;

/** The folder of recorded histories: one subfolder per homeostat release (`test/histories/<version>/`). */
export const historiesRoot = join(__dirname, '../histories');

/** This build's homeostat version: the folder new histories are recorded in. */
export const homeostatVersion = (
  JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as {
    version: string;
  }
).version;

/**
 * Records `history` as `test/histories/<this version>/<name>.json` when the run asks for it
 * (`RECORD_HISTORIES=1`): the histories CI replays with every later version's code.
 */
export async function recordHistory(
  name: string,
  fetch: () => Promise<temporal.api.history.v1.IHistory>,
): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const dir = join(historiesRoot, homeostatVersion);
  mkdirSync(dir, { recursive: true });
  writeHistory(join(dir, `${name}.json`), await fetch());
}

/** Writes a history to `path` as JSON. */
export function writeHistory(path: string, history: temporal.api.history.v1.IHistory): void {
  const object = History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
  writeFileSync(path, `${JSON.stringify(object)}\n`);
}

/** Reads a history written by {@link writeHistory}. */
export function readHistory(path: string): temporal.api.history.v1.History {
  return History.fromObject(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
}

/** The fields of a local activity's marker the tests read. */
interface LocalActivityMarker {
  readonly activity_type?: string;
}

/**
 * The activity types a history ran, in order: regular activities (scheduled events) and local
 * activities (their `core_local_activity` markers), so a check holds whichever way a step ran.
 */
export function activityTypes(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) return [scheduled];
    const marker = e.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
    if (!data) return [];
    const type = (JSON.parse(Buffer.from(data).toString('utf8')) as LocalActivityMarker).activity_type;
    return type ? [type] : [];
  });
}

/** The result payloads of the activities a history ran, regular and local, in order. */
export function activityResults(history: temporal.api.history.v1.IHistory): temporal.api.common.v1.IPayload[] {
  return (history.events ?? []).flatMap((e) => {
    const completed = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
    if (completed) return [completed];
    const marker = e.markerRecordedEventAttributes;
    const result = marker?.markerName === 'core_local_activity' ? marker.details?.result?.payloads?.[0] : undefined;
    return result ? [result] : [];
  });
}
