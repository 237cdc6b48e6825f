/**
 * The HTTP requests the stack makes to its own servers: readiness probes, and kube-apiserver calls as
 * the stack's admin (client certificate).
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { ComponentContext } from './context';

/** Whether a plain-HTTP URL answers 2xx within 2 s. */
export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.ok;
}

/**
 * One HTTPS request, answered with its status and body text; rejects on a network error or when no
 * answer comes within `options.timeout`.
 */
export function httpsText(
  url: string,
  options: RequestOptions,
  payload?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolveRes, reject) => {
    const req = httpsRequest(url, options, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolveRes({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The stack's admin credentials for kube-apiserver (its CA, the admin's client certificate). */
export function adminTls(ctx: Pick<ComponentContext, 'pki'>): Pick<RequestOptions, 'ca' | 'cert' | 'key'> {
  return {
    ca: readFileSync(ctx.pki.caCert),
    cert: readFileSync(ctx.pki.adminCert),
    key: readFileSync(ctx.pki.adminKey),
  };
}

/** Whether a component's own HTTPS `/healthz` (self-signed certificate, open to anonymous) answers ok. */
export async function healthzOk(port: number): Promise<boolean> {
  const res = await httpsText(`https://127.0.0.1:${port}/healthz`, { rejectUnauthorized: false, timeout: 2000 });
  return res.status === 200 && res.text.trim() === 'ok';
}

/** One request to kube-apiserver as the stack's admin; JSON in and out. */
export async function kubeRequest(
  ctx: Pick<ComponentContext, 'pki' | 'ports'>,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const res = await httpsText(
    `https://127.0.0.1:${ctx.ports.kube}${path}`,
    {
      method,
      ...adminTls(ctx),
      timeout: 10_000,
      headers:
        payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) },
    },
    payload,
  );
  let parsed: unknown = res.text;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}
