/**
 * API discovery (controller-runtime's RESTMapper): the plural and scope of a kind come from the API
 * server's resource lists (`/api/v1`, `/apis/<group>/<version>`), never from string rules. One list
 * per group-version is fetched and cached; a kind missing from a cached list refetches it once (a CRD
 * installed since), and a kind the server does not serve fails with a message naming it.
 */
import type * as k8s from '@kubernetes/client-node';
import { kubeRequest } from './kube-http';
import { parseApiVersion } from './predicates';
import type { ErrorCode } from '../core/errors';

/** A resource as the API server serves it. */
export interface DiscoveredResource {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The resource's name in URLs (`networkpolicies`). */
  readonly plural: string;
  readonly namespaced: boolean;
  /** What the server allows on it (`list`, `watch`, …). */
  readonly verbs: readonly string[];
}

/** Thrown when discovery cannot name a kind's resource. */
export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';
  readonly code: ErrorCode = 'ERR_DISCOVERY';
}

interface ApiResourceList {
  readonly resources?: readonly {
    readonly name?: string;
    readonly kind?: string;
    readonly namespaced?: boolean;
    readonly verbs?: readonly string[];
  }[];
}

/** Resolves kinds to resources through the API server's discovery documents. */
export interface ResourceMapper {
  /** The resource serving `kind` in `apiVersion`; throws a {@link DiscoveryError} naming the kind when none does. */
  resourceFor(apiVersion: string, kind: string): Promise<DiscoveredResource>;
}

/** Options of {@link ApiDiscovery}. */
export interface ApiDiscoveryOptions {
  /** Timeout of one discovery request. @default 15_000 */
  readonly timeoutMs?: number;
  /**
   * How long a kind that is not served is asked for again before failing: a CRD reported Established
   * can reach the discovery documents a moment later. @default 5_000
   */
  readonly notServedGraceMs?: number;
}

/** A {@link ResourceMapper} over one cluster, caching each group-version's resource list. */
export class ApiDiscovery implements ResourceMapper {
  private readonly lists = new Map<string, Promise<DiscoveredResource[] | undefined>>();

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly options: ApiDiscoveryOptions = {},
  ) {}

  async resourceFor(apiVersion: string, kind: string): Promise<DiscoveredResource> {
    const { group, version } = parseApiVersion(apiVersion);
    // Names go into URL paths: refuse anything that is not a group and version as Kubernetes spells them.
    if (
      !/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/.test(group) ||
      !/^[a-z0-9]+$/.test(version)
    ) {
      throw new DiscoveryError(`${JSON.stringify(apiVersion)} is not a valid apiVersion (kind ${kind})`);
    }
    if (!kind) throw new DiscoveryError(`no kind given in ${apiVersion}`);
    const find = (list: DiscoveredResource[] | undefined) => list?.find((r) => r.kind === kind);
    let found = find(await this.list(group, version));
    // Cached before its CRD was installed, or installed a moment ago: ask again for a little while.
    const deadline = Date.now() + (this.options.notServedGraceMs ?? 5_000);
    while (!found) {
      found = find(await this.list(group, version, true));
      if (found || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (found) return found;
    const served = await this.list(group, version);
    throw new DiscoveryError(
      served
        ? `the API server serves no kind ${kind} in ${apiVersion} (install its CRD first)`
        : `the API server does not serve ${apiVersion}, so kind ${kind} cannot be watched (install its CRD first)`,
    );
  }

  /** The resources of a group-version (subresources excluded); `undefined` when the server does not serve it. */
  list(group: string, version: string, refresh = false): Promise<DiscoveredResource[] | undefined> {
    const key = `${group}/${version}`;
    let cached = this.lists.get(key);
    if (!cached || refresh) {
      const fetching = this.fetch(group, version);
      // A failed request is not cached: the next call asks again.
      fetching.catch(() => {
        if (this.lists.get(key) === fetching) this.lists.delete(key);
      });
      this.lists.set(key, fetching);
      cached = fetching;
    }
    return cached;
  }

  private async fetch(group: string, version: string): Promise<DiscoveredResource[] | undefined> {
    const path = group
      ? `/apis/${encodeURIComponent(group)}/${encodeURIComponent(version)}`
      : `/api/${encodeURIComponent(version)}`;
    const res = await kubeRequest<ApiResourceList & { message?: string }>(this.kc, path, {
      timeoutMs: this.options.timeoutMs ?? 15_000,
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200 || !res.body) {
      throw new DiscoveryError(`discovery ${path}: HTTP ${res.status} ${res.body?.message ?? ''}`.trim());
    }
    return (res.body.resources ?? [])
      .filter((r) => typeof r.name === 'string' && !r.name.includes('/') && typeof r.kind === 'string')
      .map((r) => ({
        group,
        version,
        kind: r.kind!,
        plural: r.name!,
        namespaced: r.namespaced === true,
        verbs: r.verbs ?? [],
      }));
  }
}
