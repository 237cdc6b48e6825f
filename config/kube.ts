/** The Kubernetes credentials of every homeostat process. */
import * as k8s from '@kubernetes/client-node';

/**
 * A kubeconfig from `path` (KUBECONFIG) or, when unset, the default: the in-cluster ServiceAccount
 * when running in a pod, else `~/.kube/config`.
 */
export function loadKubeConfig(path?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}
