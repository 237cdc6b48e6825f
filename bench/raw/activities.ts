/** The raw baseline's activities: three no-ops and the status write (one merge patch). */
import type * as k8s from '@kubernetes/client-node';
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
