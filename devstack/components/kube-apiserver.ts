/**
 * kube-apiserver with envtest's flags, the admin kubeconfig the stack's clients use, and an audit log of
 * the requests of homeostat's own ServiceAccounts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop } from './context';
import { adminTls, httpsText } from './http-probes';

/** The kubeconfig file of the admin user. */
export function kubeconfigPath(ctx: Pick<ComponentContext, 'dir'>): string {
  return join(ctx.dir, 'kubeconfig');
}

/** The kube-apiserver's audit log (JSON lines): the requests of homeostat's own ServiceAccounts. */
export function auditLogPath(ctx: Pick<ComponentContext, 'dir'>): string {
  return join(ctx.dir, 'logs', 'kube-apiserver-audit.log');
}

/**
 * Starts kube-apiserver with envtest's flags (RBAC, generated TLS, client-certificate admin, a
 * service-account signing key so ServiceAccount tokens work), writes the admin kubeconfig and waits
 * for `/readyz`.
 */
export async function startKubeApiserver(ctx: ComponentContext): Promise<ManagedProcess> {
  const certDir = join(ctx.dir, 'kube-apiserver');
  mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const server = `https://127.0.0.1:${ctx.ports.kube}`;
  // What homeostat's own ServiceAccounts do, request by request (verb, resource, user): a test compares
  // it with what deploy/rbac grants them. Nobody else's requests are logged.
  const auditPolicy = join(certDir, 'audit-policy.yaml');
  writeFileSync(
    auditPolicy,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived]',
      'rules:',
      // The API's SubjectAccessReviews with their body: a test checks what it asks (extra included).
      '  - level: Request',
      '    userGroups: ["system:serviceaccounts:homeostat-system"]',
      '    resources: [{ group: authorization.k8s.io, resources: [subjectaccessreviews] }]',
      '  - level: Metadata',
      '    userGroups: ["system:serviceaccounts:homeostat-system"]',
      '  - level: None',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const args = [
    `--etcd-servers=http://127.0.0.1:${ctx.ports.etcdClient}`,
    `--cert-dir=${certDir}`,
    `--tls-cert-file=${ctx.pki.serverCert}`,
    `--tls-private-key-file=${ctx.pki.serverKey}`,
    `--client-ca-file=${ctx.pki.caCert}`,
    `--secure-port=${ctx.ports.kube}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--authorization-mode=RBAC',
    // As in clusters that enforce it (OpenShift, hardened kubeadm): setting blockOwnerDeletion on a
    // child needs `update` on the owner's finalizers, which deploy/rbac must then grant.
    '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
    `--audit-policy-file=${auditPolicy}`,
    `--audit-log-path=${auditLogPath(ctx)}`,
    '--audit-log-format=json',
    '--audit-log-maxsize=100',
    '--audit-log-maxbackup=1',
    // Without a controller-manager no ServiceAccount (nor its token) ever exists, and the admission
    // plugin would refuse every Pod: envtest disables it. The whole cluster has both, so keeps it.
    ...(ctx.cluster
      ? [
          // Pods leave a NotReady/unreachable node after 10 s instead of 5 min, so node-failure
          // tests finish in seconds.
          '--default-not-ready-toleration-seconds=10',
          '--default-unreachable-toleration-seconds=10',
        ]
      : ['--disable-admission-plugins=ServiceAccount']),
    `--service-account-issuer=${server}`,
    `--service-account-key-file=${ctx.pki.saPub}`,
    `--service-account-signing-key-file=${ctx.pki.saKey}`,
    '--endpoint-reconciler-type=none',
    '--profiling=false',
    '--v=1',
  ];
  const proc = startProcess({
    name: 'kube-apiserver',
    executable: ctx.binaries['kube-apiserver'],
    args,
    logFile: logFile(ctx, 'kube-apiserver'),
  });
  writeKubeconfig(ctx, server);
  return readyOrStop(proc, () =>
    waitUntil('kube-apiserver', () => kubeReady(ctx, server), { timeoutMs: 90_000, proc, intervalMs: 300 }),
  );
}

function writeKubeconfig(ctx: ComponentContext, server: string): void {
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: homeostat-devstack',
    '    cluster:',
    `      server: ${server}`,
    `      certificate-authority: ${ctx.pki.caCert}`,
    'users:',
    '  - name: homeostat-admin',
    '    user:',
    `      client-certificate: ${ctx.pki.adminCert}`,
    `      client-key: ${ctx.pki.adminKey}`,
    'contexts:',
    '  - name: homeostat-devstack',
    '    context:',
    '      cluster: homeostat-devstack',
    '      user: homeostat-admin',
    '      namespace: default',
    'current-context: homeostat-devstack',
    '',
  ].join('\n');
  writeFileSync(kubeconfigPath(ctx), yaml, { mode: 0o600 });
}

function kubeReady(ctx: ComponentContext, server: string): Promise<boolean> {
  return httpsText(`${server}/readyz`, { ...adminTls(ctx), timeout: 2000 }).then(
    (res) => res.status === 200 && res.text.trim() === 'ok',
  );
}
