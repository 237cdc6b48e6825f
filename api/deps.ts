/** What the API is built from: its clients, the kinds it serves, and its limits. */
import type { FairnessSetting } from '../core/fairness';
import type * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { plansOf, type Operator } from '../core/operator';
import { planRegistry, type PlanRegistry } from '../core/plan';
import type { ApiAuth } from './auth';
import type { CodecEndpointOptions } from './codec-endpoint';

/** What the API needs. */
export interface ApiDeps {
  readonly temporal: Client;
  readonly kc: k8s.KubeConfig;
  readonly objects: k8s.KubernetesObjectApi;
  readonly plans: PlanRegistry;
  /** Short names by kind (`pgdb`), listed by `GET /v1/kinds` for clients that resolve kinds. */
  readonly shortNames?: Readonly<Record<string, readonly string[]>>;
  readonly auth: ApiAuth;
  readonly log: Logger;
  /** @default 'homeostat' */
  readonly taskQueue: string;
  /** Fairness weights by namespace for the workflows it starts (see `core/fairness.ts`), or `false` for none. @default every namespace 1 */
  readonly fairnessWeights?: FairnessSetting;
  /** Base URL of the Temporal UI, for links to workflows. */
  readonly temporalUiUrl?: string;
  /** Requests per minute per caller. @default 600 */
  readonly rateLimitPerMinute?: number;
  /** How long `POST …/reconcile` waits for the pass before answering 202. @default 30_000 */
  readonly reconcileWaitMs?: number;
  /** Largest request body accepted. @default 16384 */
  readonly bodyLimit?: number;
  /**
   * Serve Temporal's codec-server protocol at `/codec/decode` and `/codec/encode` with this payload
   * codec, for the Temporal UI at `allowedOrigins` (see `codec-endpoint.ts`). @default not served
   */
  readonly codec?: {
    readonly payloadCodec: CodecEndpointOptions['codec'];
    readonly allowedOrigins?: readonly string[];
  };
  /**
   * Failed TokenReviews of tokens local verification cannot judge (opaque tokens when they may be
   * reviewed, JWTs while their issuer's keys cannot be fetched) one client address may cause per
   * minute before such tokens get 429 without a TokenReview. Tokens refused or verified locally are
   * never limited. @default 30
   */
  readonly authFailuresPerMinute?: number;
  /** Deadline of each call to Temporal (the wait for a pass has its own, `reconcileWaitMs`). @default 10_000 */
  readonly temporalTimeoutMs?: number;
  /**
   * Key of the MAC that seals list page tokens, so only tokens this API issued (for the same query)
   * reach Temporal. Replicas behind one Service need the same key. @default random per process
   */
  readonly pageTokenKey?: Buffer;
  /** Serve HTTPS with this certificate and key (PEM); without it, plain HTTP. */
  readonly https?: { readonly cert: string | Buffer; readonly key: string | Buffer };
}

/**
 * The kinds an operator serves through the API, as {@link ApiDeps} takes them: its plans, and the
 * short names of the CRDs it defines (`pgdb`), listed by `GET /v1/kinds`.
 */
export function apiKindsOf(operator: Operator): Pick<ApiDeps, 'plans' | 'shortNames'> {
  return {
    plans: planRegistry(plansOf(operator)),
    shortNames: Object.fromEntries(
      operator.reconcilers.map((r) => [r.plan.kind, r.crd ? [...(r.crd.shortNames ?? [])] : []]),
    ),
  };
}
