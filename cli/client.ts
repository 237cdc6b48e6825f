/**
 * The `homeostat reconcile | get | list` commands (and the client `diff` uses): clients of the HTTP API, with human-readable tables
 * by default and `-o json`.
 */

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Where the API is and who calls it. */
export interface ApiTarget {
  /** @default $HOMEOSTAT_API_URL, else https://127.0.0.1:8080 */
  readonly url: string;
  /** @default $HOMEOSTAT_API_TOKEN */
  readonly token?: string;
  /** CA certificate(s), PEM, that the API's HTTPS certificate is checked against. @default the system's */
  readonly ca?: string | Buffer;
}

/** A kind the API serves, as `GET /v1/kinds` lists it. */
export interface ApiKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly shortNames: readonly string[];
}

/**
 * Finds a kind the API serves by kind name, plural, `plural.group` or short name (case-insensitive),
 * as kubectl does.
 */
export async function resolveKind(target: ApiTarget, name: string): Promise<ApiKind> {
  const { kinds } = (await call(target, 'GET', '/v1/kinds')) as { kinds: ApiKind[] };
  const n = name.toLowerCase();
  const found = kinds.find((k) =>
    [k.kind.toLowerCase(), k.plural, `${k.plural}.${k.group}`, ...k.shortNames.map((s) => s.toLowerCase())].includes(n),
  );
  if (!found) throw new Error(`unknown kind ${name}: one of ${kinds.map((k) => k.kind).join(', ')}`);
  return found;
}

/** Splits `namespace/name` (or `name` with a default namespace). */
export function splitName(arg: string, namespace = 'default'): { namespace: string; name: string } {
  const [a, b] = arg.split('/');
  return b === undefined ? { namespace, name: a ?? '' } : { namespace: a ?? '', name: b };
}

/** Calls the API: the answer's JSON, or an error `<status> <code>: <detail>`; `json` is sent as the body. */
export async function call(target: ApiTarget, method: string, path: string, json?: unknown): Promise<unknown> {
  const url = new URL(path, target.url);
  const payload = json === undefined ? undefined : JSON.stringify(json);
  const { status, statusText, text } = await new Promise<{ status: number; statusText: string; text: string }>(
    (resolve, reject) => {
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        {
          method,
          headers: {
            ...(target.token ? { authorization: `Bearer ${target.token}` } : {}),
            ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          timeout: 120_000,
          // One request per command: no keep-alive socket holding the process open after it.
          agent: false,
          ...(url.protocol === 'https:' && target.ca ? { ca: target.ca } : {}),
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url.origin} in 120 s`)));
      req.on('error', reject);
      req.end(payload);
    },
  );
  let body: { detail?: string; code?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON: the status line says enough
  }
  if (status < 200 || status >= 300) throw new Error(`${status} ${body.code ?? ''}: ${body.detail ?? statusText}`);
  return body;
}

/** Formats rows as a left-aligned table with upper-case headers. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('   ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n');
}

/** The API path of an object. */
export const objectPath = (plan: ApiKind, namespace: string, name: string): string =>
  `/v1/objects/${plan.group || 'core'}/${plan.version}/${plan.kind}/${plan.scope === 'Cluster' ? '_' : namespace}/${name}`;

interface Steps {
  steps: Record<string, { status: string; attempts: number; message?: string }>;
}

/** `homeostat reconcile KIND NS/NAME`: runs a pass and prints its outcome. */
export async function reconcileCommand(target: ApiTarget, kind: string, arg: string, json: boolean): Promise<string> {
  const plan = await resolveKind(target, kind);
  const { namespace, name } = splitName(arg);
  const res = (await call(target, 'POST', `${objectPath(plan, namespace, name)}/reconcile`)) as {
    workflowId: string;
    link?: string;
    outcome?: Steps & { pass: number; phase: string; result: string; generation: number; error?: string };
  };
  if (json) return JSON.stringify(res, null, 2);
  if (!res.outcome) return `accepted: ${res.workflowId}${res.link ? `\n${res.link}` : ''}`;
  const o = res.outcome;
  const steps = table(
    ['step', 'status', 'attempts', 'message'],
    Object.entries(o.steps).map(([s, v]) => [s, v.status, String(v.attempts), v.message ?? '']),
  );
  return `${plan.kind} ${namespace}/${name}: pass ${o.pass} ${o.result}, phase ${o.phase}, generation ${o.generation}${o.error ? `\nerror: ${o.error}` : ''}\n\n${steps}${res.link ? `\n\n${res.link}` : ''}`;
}

/** `homeostat get KIND NS/NAME`: prints the object's reconcile state. */
export async function getCommand(target: ApiTarget, kind: string, arg: string, json: boolean): Promise<string> {
  const plan = await resolveKind(target, kind);
  const { namespace, name } = splitName(arg);
  const res = (await call(target, 'GET', objectPath(plan, namespace, name))) as {
    state: Steps & {
      phase: string;
      observedGeneration?: number;
      passes: number;
      lastError?: string;
      conditions: { type: string; status: string; reason: string; message: string }[];
    };
  };
  if (json) return JSON.stringify(res, null, 2);
  const s = res.state;
  const conditions = table(
    ['condition', 'status', 'reason', 'message'],
    s.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
  );
  const steps = table(
    ['step', 'status', 'attempts', 'message'],
    Object.entries(s.steps).map(([k, v]) => [k, v.status, String(v.attempts), v.message ?? '']),
  );
  return `${plan.kind} ${namespace}/${name}: phase ${s.phase}, observed generation ${s.observedGeneration ?? '-'}, ${s.passes} passes${s.lastError ? `\nlast error: ${s.lastError}` : ''}\n\n${conditions}\n\n${steps}`;
}

/** `homeostat list KIND [-n NS] [--phase P]`: lists objects from Temporal visibility. */
export async function listCommand(
  target: ApiTarget,
  kind: string,
  options: { namespace?: string; phase?: string },
  json: boolean,
): Promise<string> {
  const plan = await resolveKind(target, kind);
  const q = new URLSearchParams({
    kind: plan.kind,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.phase ? { phase: options.phase } : {}),
  });
  const res = (await call(target, 'GET', `/v1/objects?${q.toString()}`)) as {
    items: { namespace?: string; name?: string; phase?: string; generation?: number; status: string }[];
  };
  if (json) return JSON.stringify(res, null, 2);
  return table(
    ['namespace', 'name', 'phase', 'generation', 'workflow'],
    res.items.map((i) => [i.namespace ?? '', i.name ?? '', i.phase ?? '', String(i.generation ?? ''), i.status]),
  );
}
