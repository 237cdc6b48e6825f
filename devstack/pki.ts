import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withPrivateFiles } from './processes';

/** Files of the local control plane's PKI, all PEM. */
export interface StackPki {
  readonly caCert: string;
  readonly caKey: string;
  readonly serverCert: string;
  readonly serverKey: string;
  /** Client certificate of the admin user (`O=system:masters`). */
  readonly adminCert: string;
  readonly adminKey: string;
  /** Service-account token signing key pair. */
  readonly saKey: string;
  readonly saPub: string;
}

function openssl(args: string[], cwd: string): void {
  withPrivateFiles(() => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] }));
}

/**
 * Creates (once) a CA, a serving certificate for kube-apiserver, an admin client certificate and a
 * service-account key pair with the `openssl` command, the way envtest provisions its control plane.
 */
export function ensurePki(dir: string): StackPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (name: string): string => join(dir, name);
  const pki: StackPki = {
    caCert: f('ca.crt'),
    caKey: f('ca.key'),
    serverCert: f('apiserver.crt'),
    serverKey: f('apiserver.key'),
    adminCert: f('admin.crt'),
    adminKey: f('admin.key'),
    saKey: f('sa.key'),
    saPub: f('sa.pub'),
  };
  if (existsSync(pki.saPub)) return pki;
  const days = '3650';
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      pki.caKey,
      '-out',
      pki.caCert,
      '-days',
      days,
      '-subj',
      '/CN=homeostat-devstack-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    dir,
  );
  const sign = (name: string, subject: string, ext: string): void =>
    signCertificate(dir, { cert: pki.caCert, key: pki.caKey }, name, subject, ext);
  sign(
    'apiserver',
    '/CN=kube-apiserver',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
      '',
    ].join('\n'),
  );
  sign(
    'admin',
    '/O=system:masters/CN=homeostat-admin',
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=clientAuth',
      '',
    ].join('\n'),
  );
  openssl(['genrsa', '-out', pki.saKey, '2048'], dir);
  openssl(['rsa', '-in', pki.saKey, '-pubout', '-out', pki.saPub], dir);
  return pki;
}

/** Signs a new key's certificate `<name>.crt` / `<name>.key` in `dir` with the CA, with openssl. */
function signCertificate(
  dir: string,
  ca: { readonly cert: string; readonly key: string },
  name: string,
  subject: string,
  ext: string,
): void {
  const f = (file: string): string => join(dir, file);
  writeFileSync(f(`${name}.ext`), ext, { mode: 0o600 });
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', subject],
    dir,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-out',
      f(`${name}.crt`),
      '-days',
      '3650',
      '-extfile',
      f(`${name}.ext`),
    ],
    dir,
  );
}

/** A serving certificate signed by the stack's CA: PEM files. */
export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
  /** The CA clients check it against. */
  readonly ca: string;
}

/**
 * Creates (once) a serving certificate `<name>.crt` for 127.0.0.1 and localhost, signed by the CA of
 * the PKI in `dir` (see {@link ensurePki}): for homeostat's own HTTPS endpoints on the local stack.
 */
export function ensureServingCertificate(dir: string, name: string): ServingCertificate {
  const pki = ensurePki(dir);
  const out: ServingCertificate = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`), ca: pki.caCert };
  if (existsSync(out.cert) && existsSync(out.key)) return out;
  signCertificate(
    dir,
    { cert: pki.caCert, key: pki.caKey },
    name,
    `/CN=${name}`,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '',
    ].join('\n'),
  );
  return out;
}
