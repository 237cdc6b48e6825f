/**
 * `homeostat diff KIND NS/NAME` and `homeostat diff -f MANIFEST`: what a reconcile pass would do, from
 * the API's dry run (`POST …/plan`), as `kubectl diff` shows a server-side dry run: each step, each
 * child with the fields that would change (old → new), each change a step's preview lists. Exit status
 * as `kubectl diff`: 0 when nothing would change, 1 when something would (or cannot be known: a step
 * without a preview), more than 1 on an error.
 */
import { readFileSync } from 'node:fs';
import { loadAllYaml } from '@kubernetes/client-node';
import type { ChildDiff, DryRunResult, DryRunStep } from '../core/dry-run';
import { type ApiKind, type ApiTarget, call, objectPath, resolveKind, splitName } from './client';

const marks: Record<ChildDiff['action'], string> = {
  create: '+',
  update: '~',
  unchanged: '=',
  delete: '-',
  refused: '!',
};

const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

/** One step of a dry run, as lines. */
function stepLines(step: DryRunStep): string[] {
  const head = `step ${step.name}: ${step.outcome === 'no-preview' ? 'would run; no preview' : step.outcome}`;
  const lines = [step.message && step.outcome !== 'no-preview' ? `${head} — ${step.message}` : head];
  for (const c of step.children) {
    const where = `${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}`;
    lines.push(`  ${marks[c.action]} ${where} (${c.action}${c.reason ? `: ${c.reason}` : ''})`);
    for (const f of c.fields) {
      lines.push(
        c.action === 'create' ? `      ${f.path}: ${show(f.new)}` : `      ${f.path}: ${show(f.old)} → ${show(f.new)}`,
      );
    }
  }
  for (const ch of step.changes) {
    lines.push(`  * ${ch.action} ${ch.target}${ch.detail ? `: ${ch.detail}` : ''}`);
  }
  return lines;
}

/** A dry run as `homeostat diff` prints it. */
export function renderDryRun(result: DryRunResult): string {
  const { ref } = result;
  const name = `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
  const from =
    result.source === 'manifest' ? (result.exists ? 'the manifest' : 'the manifest (new object)') : 'the stored object';
  const summary = result.changed ? 'a pass would change something' : 'a pass would change nothing';
  return [`${name}: ${summary} (${result.pass} pass planned from ${from})`, ...result.steps.flatMap(stepLines)].join(
    '\n',
  );
}

/** The kind the API serves for a manifest's `apiVersion` and `kind`. */
async function kindOfManifest(target: ApiTarget, manifest: Record<string, unknown>): Promise<ApiKind> {
  if (typeof manifest.kind !== 'string' || typeof manifest.apiVersion !== 'string')
    throw new Error('the manifest has no apiVersion and kind');
  const kind = await resolveKind(target, manifest.kind);
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  if (apiVersion !== manifest.apiVersion)
    throw new Error(`the API serves ${manifest.kind} as ${apiVersion}, not ${manifest.apiVersion}`);
  return kind;
}

/** Reads the one object of a YAML or JSON manifest file (`-` for standard input). */
export function readManifest(file: string): Record<string, unknown> {
  const docs = loadAllYaml(readFileSync(file === '-' ? 0 : file, 'utf8')).filter((d) => d != null);
  if (docs.length !== 1 || typeof docs[0] !== 'object') throw new Error(`${file}: expected exactly one object`);
  return docs[0] as Record<string, unknown>;
}

/**
 * Runs `homeostat diff`: the stored object `kind` `arg`, or the manifest in `file`. Returns what to
 * print and whether something would change.
 */
export async function diffCommand(
  target: ApiTarget,
  what: { kind?: string; name?: string; file?: string },
  json: boolean,
): Promise<{ output: string; changed: boolean }> {
  let result: DryRunResult;
  if (what.file !== undefined) {
    const manifest = readManifest(what.file);
    const kind = await kindOfManifest(target, manifest);
    const meta = (manifest.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    if (typeof meta.name !== 'string') throw new Error('the manifest has no metadata.name');
    const namespace = typeof meta.namespace === 'string' ? meta.namespace : 'default';
    result = (await call(target, 'POST', `${objectPath(kind, namespace, meta.name)}/plan`, manifest)) as DryRunResult;
  } else {
    if (what.kind === undefined || what.name === undefined) throw new Error('name KIND NAMESPACE/NAME, or -f MANIFEST');
    const kind = await resolveKind(target, what.kind);
    const { namespace, name } = splitName(what.name);
    result = (await call(target, 'POST', `${objectPath(kind, namespace, name)}/plan`)) as DryRunResult;
  }
  return { output: json ? JSON.stringify(result, null, 2) : renderDryRun(result), changed: result.changed };
}
