/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics: a candidate takes
 * the Lease when it is free or when its record has not changed for `leaseDuration` (measured on the
 * candidate's own clock, so clocks need not agree); the leader renews every `retryPeriod` and steps
 * down when it could not renew within `renewDeadline`; a graceful stop releases the Lease so a standby
 * takes over at once. Writes use the Lease's resourceVersion (optimistic concurrency).
 */
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { kubeRequest } from './kube-http';
import { type Clock, type Random, sleepOn, systemClock } from './types';

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  readonly kc: k8s.KubeConfig;
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease. */
  readonly name: string;
  /** This replica's identity (unique per process). */
  readonly identity: string;
  /** How long a Lease holds without renewal. @default 15_000 */
  readonly leaseDurationMs?: number;
  /** The leader steps down when it could not renew for this long. @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** Time between attempts (acquire and renew). @default 2_000 */
  readonly retryPeriodMs?: number;
  readonly log: Logger;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: () => void;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Jitter of the acquire retry period (client-go: 1.2). @default Math.random */
  readonly random?: Random;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** A Kubernetes MicroTime (RFC 3339 with microseconds). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Campaigns for a Lease and keeps it while running. */
export class LeaderElector {
  private readonly opts: LeaderElectorOptions;
  private readonly clock: Clock;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly stopController = new AbortController();
  private leading = false;
  private lastRenewAt = 0;
  private observed: { key: string; at: number } | undefined;
  private lease: Lease | undefined;
  private running: Promise<void> | undefined;

  constructor(options: LeaderElectorOptions) {
    this.opts = options;
    this.clock = options.clock ?? systemClock;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
  }

  /** Whether this replica holds the Lease. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** When the Lease was last renewed by this replica (ms since epoch; 0 if never). */
  get lastRenewal(): number {
    return this.lastRenewAt;
  }

  /** The identity of the current holder as last observed. */
  get holder(): string | undefined {
    return this.lease?.spec?.holderIdentity || undefined;
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.running ??= this.run().catch((err: unknown) => this.opts.log.error({ err }, 'leader election crashed'));
  }

  /** Stops campaigning; a leader releases the Lease so a standby can take it at once. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
    if (this.leading) {
      this.leading = false;
      this.opts.onStoppedLeading();
      await this.release().catch((err: unknown) => this.opts.log.warn({ err }, 'could not release lease'));
    }
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases`;
  }

  private async run(): Promise<void> {
    const signal = this.stopController.signal;
    while (!signal.aborted) {
      if (!this.leading) {
        if (await this.tryAcquireOrRenew(this.retryPeriodMs * 2)) {
          this.leading = true;
          this.lastRenewAt = this.clock.now();
          this.opts.log.info({ identity: this.opts.identity }, 'became leader');
          this.opts.onStartedLeading();
          continue;
        }
        await sleepOn(this.clock, this.retryPeriodMs * (1 + 0.2 * (this.opts.random ?? Math.random)()), signal);
        continue;
      }
      await sleepOn(this.clock, this.retryPeriodMs, signal);
      if (signal.aborted) return;
      const left = this.renewDeadlineMs - (this.clock.now() - this.lastRenewAt);
      if (left > 0 && (await this.tryAcquireOrRenew(left))) {
        this.lastRenewAt = this.clock.now();
      } else if (this.clock.now() - this.lastRenewAt >= this.renewDeadlineMs) {
        this.leading = false;
        this.opts.log.warn({ identity: this.opts.identity }, 'lost leadership: renew deadline passed');
        this.opts.onStoppedLeading();
      }
    }
  }

  /** One attempt to take or renew the Lease; false when another replica holds it or on any error. */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    try {
      const { kc, name, identity } = this.opts;
      const now = this.clock.now();
      const got = await kubeRequest<Lease>(kc, `${this.path}/${name}`, { timeoutMs });
      const leaseSeconds = Math.ceil(this.leaseDurationMs / 1000);
      if (got.status === 404) {
        const created = await kubeRequest<Lease>(kc, this.path, {
          method: 'POST',
          timeoutMs,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace: this.opts.namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: leaseSeconds,
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          },
        });
        if (created.status !== 201 || !created.body) return false;
        this.lease = created.body;
        return true;
      }
      if (got.status !== 200 || !got.body) return false;
      const lease = got.body;
      this.lease = lease;
      const spec = lease.spec ?? {};
      const key = `${spec.holderIdentity}/${spec.renewTime}/${lease.metadata.resourceVersion}`;
      if (this.observed?.key !== key) this.observed = { key, at: now };
      const heldByOther = !!spec.holderIdentity && spec.holderIdentity !== identity;
      const durationMs = (spec.leaseDurationSeconds ?? leaseSeconds) * 1000;
      if (heldByOther && this.observed.at + durationMs > now) return false;
      const mine = spec.holderIdentity === identity;
      const updated = await kubeRequest<Lease>(kc, `${this.path}/${name}`, {
        method: 'PUT',
        timeoutMs,
        body: {
          ...lease,
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: leaseSeconds,
            acquireTime: mine && spec.acquireTime ? spec.acquireTime : microTime(now),
            renewTime: microTime(now),
            leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
          },
        },
      });
      if (updated.status !== 200 || !updated.body) return false;
      this.lease = updated.body;
      return true;
    } catch (err) {
      this.opts.log.debug({ err }, 'lease attempt failed');
      return false;
    }
  }

  private async release(): Promise<void> {
    const lease = this.lease;
    if (!lease || lease.spec?.holderIdentity !== this.opts.identity) return;
    const now = this.clock.now();
    await kubeRequest(this.opts.kc, `${this.path}/${this.opts.name}`, {
      method: 'PUT',
      timeoutMs: 5_000,
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: microTime(now),
          renewTime: microTime(now),
        },
      },
    });
    this.opts.log.info({ identity: this.opts.identity }, 'released lease');
  }
}
