/**
 * Kept-alive connections to the API server for every API client made from a kubeconfig (not workflow
 * code: it uses Node's https).
 */
import { createHash } from 'node:crypto';
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/** Free connections are closed after this long idle, well before the API server's own idle timeout (90 s). */
const idleSocketMs = 30_000;
/** Distinct credential sets kept (each a pool of connections); a rotated client certificate is a new one. */
const maxAgents = 8;
const shared = new WeakSet<k8s.KubeConfig>();

/**
 * Makes every API client made from `kc` reuse its TLS connections to the API server. client-node
 * gives each request a new `https.Agent`, so each request opens a new connection: a TCP and TLS
 * handshake and a new TLS context (CA, client certificate and key parsed again). Profiled on a burst
 * of 500 objects, that was a quarter of the worker's CPU. Here the agent of a request is replaced by
 * a kept-alive one shared by every request with the same TLS options (hashed, so a rotated
 * certificate gets a new pool); bearer tokens travel in headers and are untouched. Requests through a
 * proxy, and watches (which open their own long-lived connections), are left as client-node makes
 * them. Returns `kc`, changed in place; calling it again does nothing.
 */
export function shareConnections(kc: k8s.KubeConfig): k8s.KubeConfig {
  if (shared.has(kc)) return kc;
  shared.add(kc);
  const original = kc.applySecurityAuthentication.bind(kc);
  const agents = new Map<string, https.Agent>();
  kc.applySecurityAuthentication = async (context) => {
    await original(context);
    const agent = context.getAgent();
    if (kc.getCurrentCluster()?.proxyUrl || !(agent instanceof https.Agent) || agent.constructor !== https.Agent) {
      return;
    }
    const key = tlsOptionsKey(agent.options);
    let keep = agents.get(key);
    if (!keep) {
      if (agents.size >= maxAgents) {
        const [oldest, old] = agents.entries().next().value as [string, https.Agent];
        agents.delete(oldest);
        old.destroy();
      }
      keep = new https.Agent({ ...agent.options, keepAlive: true, timeout: idleSocketMs });
      agents.set(key, keep);
    }
    context.setAgent(keep);
  };
  return kc;
}

/** A digest of the TLS options that decide which connections a request may share. */
export function tlsOptionsKey(o: https.AgentOptions): string {
  const hash = createHash('sha256');
  for (const part of [o.ca, o.cert, o.key, o.pfx, o.passphrase, o.servername, String(o.rejectUnauthorized)]) {
    for (const piece of Array.isArray(part) ? part : [part]) {
      if (typeof piece === 'string' || Buffer.isBuffer(piece)) hash.update(piece);
      else if (piece !== undefined) hash.update(JSON.stringify(piece));
      hash.update('\0');
    }
  }
  return hash.digest('hex');
}
