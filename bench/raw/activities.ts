/** The raw baseline's activities: three no-ops and the status write (one merge patch). */
import * as k8s from '@kubernetes/client-node';
import { shareConnections } from '../../config';
import { patchReadyStatus } from '../status';
import type { RawRequest } from './definitions';

/** The activities of {@link rawWorkflow}. */
export interface RawActivities {
  first(request: RawRequest): Promise<void>;
  second(request: RawRequest): Promise<void>;
  third(request: RawRequest): Promise<void>;
  writeStatus(request: RawRequest): Promise<void>;
}

/** Builds the raw baseline's activities on a Kubernetes client. */
export function createRawActivities(custom: k8s.CustomObjectsApi): RawActivities {
  return {
    first: async () => {},
    second: async () => {},
    third: async () => {},
    writeStatus: (r) => patchReadyStatus(custom, r.namespace, r.name, r.generation),
  };
}

/**
 * The raw baseline worker's activities and concurrency, from a kubeconfig: its client keeps its
 * connections as homeostat's activities do (`shareConnections`), and it runs as many activities at
 * once as homeostat's worker does by default.
 */
export function rawWorkerOptions(kc: k8s.KubeConfig): {
  activities: RawActivities;
  maxConcurrentActivityTaskExecutions: number;
} {
  return {
    activities: createRawActivities(shareConnections(kc).makeApiClient(k8s.CustomObjectsApi)),
    maxConcurrentActivityTaskExecutions: 20,
  };
}
