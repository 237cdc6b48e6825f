/**
 * Workflow histories as committed JSON files (test/histories). The files hold protobufjs's object form
 * of `temporal.api.history.v1.History` (64-bit integers and bytes as strings), not the proto3 JSON of
 * `historyToJSON`: with this install's two copies of protobufjs (one under @temporalio/common, one
 * under @temporalio/proto), `historyToJSON` and `historyFromJSON` throw "type must be a Type".
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { temporal } from '@temporalio/proto';

const History = temporal.api.history.v1.History;

/** Writes a history to `path` as JSON. */
export function writeHistory(path: string, history: temporal.api.history.v1.IHistory): void {
  const object = History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
  writeFileSync(path, `${JSON.stringify(object)}\n`);
}

/** Reads a history written by {@link writeHistory}. */
export function readHistory(path: string): temporal.api.history.v1.History {
  return History.fromObject(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
}
