/** The Kubernetes credentials of every homeostat process, and how their connections are kept. */
import * as k8s from '@kubernetes/client-node';
import { shareConnections } from '../core/kube-connections';

export { shareConnections };

/**
 * A kubeconfig from `path` (KUBECONFIG) or, when unset, the default: the in-cluster ServiceAccount
 * when running in a pod, else `~/.kube/config`. Its API clients share kept-alive connections
 * ({@link shareConnections}).
 */
export function loadKubeConfig(path?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return shareConnections(kc);
}
