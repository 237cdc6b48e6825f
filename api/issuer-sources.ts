/**
 * Where the token issuers' keys come from: the Kubernetes API server's own ServiceAccount issuer
 * (OIDC discovery at `/.well-known/openid-configuration` and its JWKS at `/openid/v1/jwks`, read
 * through the API's kubeconfig; every ServiceAccount may read them through the default
 * `system:service-account-issuer-discovery` binding), and OIDC issuers named by configuration (their
 * discovery document and `jwks_uri`, over HTTPS).
 */
import type { JsonWebKey } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import type { IssuerDocument } from './issuer-keys';

/** A fetch of the issuer documents gives up after this long. */
const timeoutMs = 10_000;
/** Discovery documents and JWKS are small; anything larger is not one. */
const maxBytes = 1 << 20;

/** GETs a JSON document from the current cluster of `kc` with its TLS and credentials. */
async function kubeGetJson(kc: k8s.KubeConfig, path: string): Promise<unknown> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  const url = new URL(cluster.server + path);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const mod = url.protocol === 'http:' ? (http as unknown as typeof https) : https;
  return new Promise((resolve, reject) => {
    const req = mod.get(url, { ...opts, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) req.destroy(new Error(`${path}: larger than ${maxBytes} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${path}: HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(new Error(`${path}: not JSON`, { cause: err }));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${path}: timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

async function httpsGetJson(url: string): Promise<unknown> {
  if (new URL(url).protocol !== 'https:') throw new Error(`${url}: an issuer's documents are fetched over HTTPS only`);
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const text = await res.text();
  if (text.length > maxBytes) throw new Error(`${url}: larger than ${maxBytes} bytes`);
  return JSON.parse(text) as unknown;
}

function keysOf(jwks: unknown, where: string): readonly JsonWebKey[] {
  const keys = (jwks as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys)) throw new Error(`${where}: not a JWKS (no "keys" array)`);
  return keys.filter((k): k is JsonWebKey => typeof k === 'object' && k !== null);
}

function issuerOf(discovery: unknown, where: string): string {
  const issuer = (discovery as { issuer?: unknown } | undefined)?.issuer;
  if (typeof issuer !== 'string' || !issuer) throw new Error(`${where}: no "issuer" in the discovery document`);
  return issuer;
}

/** Loads the ServiceAccount issuer's name and keys from the API server of `kc`. */
export function kubernetesIssuer(kc: k8s.KubeConfig): () => Promise<IssuerDocument> {
  return async () => {
    const discovery = await kubeGetJson(kc, '/.well-known/openid-configuration');
    return {
      issuer: issuerOf(discovery, 'the API server'),
      keys: keysOf(await kubeGetJson(kc, '/openid/v1/jwks'), '/openid/v1/jwks'),
    };
  };
}

/**
 * Loads an OIDC issuer's keys from its discovery document (whose `issuer` must be `issuer` itself,
 * as OIDC Discovery requires) and its `jwks_uri`.
 */
export function oidcIssuer(
  issuer: string,
  getJson: (url: string) => Promise<unknown> = httpsGetJson,
): () => Promise<IssuerDocument> {
  return async () => {
    const where = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const discovery = await getJson(where);
    const named = issuerOf(discovery, where);
    if (named !== issuer) throw new Error(`${where}: names the issuer "${named}", not "${issuer}"`);
    const jwksUri = (discovery as { jwks_uri?: unknown }).jwks_uri;
    if (typeof jwksUri !== 'string') throw new Error(`${where}: no "jwks_uri"`);
    return { issuer, keys: keysOf(await getJson(jwksUri), jwksUri) };
  };
}
