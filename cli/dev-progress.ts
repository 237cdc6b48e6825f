/**
 * The live progress view of `homeostat dev`: one line whenever something the user should see changes —
 * an example's phase, the Pods of the Deployments it owns ("3/3 Running"), its namespace terminating
 * or gone, a supervised process exiting and coming back — and, after such a restart, a line once every
 * example is Ready at its current generation again (nothing lost while the process was down).
 */
import * as k8s from '@kubernetes/client-node';
import type { SupervisorEvent } from './supervisor';

/** An example object the view follows. */
export interface WatchedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** How lines name it, e.g. `apps/pony-spawner`. */
  readonly label: string;
}

/** Options of {@link DevProgress}. */
export interface DevProgressOptions {
  readonly kc: k8s.KubeConfig;
  readonly watched: readonly WatchedObject[];
  /** Writes one line. */
  readonly say: (line: string) => void;
  /** The time lines count from. @default now */
  readonly since?: number;
}

interface ObjectView {
  readonly ready: boolean;
  /**
   * Ready at its current generation (the last pass saw what the object says now), and as many of its
   * Deployments' Pods running as it asks for: nothing left for homeostat or the cluster to do.
   */
  readonly settled: boolean;
  readonly gone: boolean;
}

type ReadObject = {
  metadata?: { uid?: string; generation?: number; deletionTimestamp?: unknown };
  spec?: { replicas?: unknown };
  status?: { phase?: string; observedGeneration?: number; conditions?: { type: string; message?: string }[] };
};

/** Follows the examples and prints what changes (see the module doc). */
export class DevProgress {
  private readonly objects: k8s.KubernetesObjectApi;
  private readonly core: k8s.CoreV1Api;
  private readonly apps: k8s.AppsV1Api;
  private readonly last = new Map<string, string>();
  private readonly since: number;
  /** Processes that exited since every example was last seen settled, and whether each is back. */
  private readonly restarts = new Map<string, boolean>();

  constructor(private readonly options: DevProgressOptions) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(options.kc);
    this.core = options.kc.makeApiClient(k8s.CoreV1Api);
    this.apps = options.kc.makeApiClient(k8s.AppsV1Api);
    this.since = options.since ?? Date.now();
  }

  /** A line stamped with the seconds since the view started. */
  line(text: string): void {
    this.options.say(`  [${`${((Date.now() - this.since) / 1000).toFixed(1)}s`.padStart(7)}] ${text}`);
  }

  /** Shows a supervised process's start, exit or restart. */
  supervisorEvent(event: SupervisorEvent): void {
    if (event.type === 'exited') {
      this.line(
        `${event.name} exited (${event.reason}); restart ${event.restart} in ${(event.delayMs / 1000).toFixed(1)}s`,
      );
      this.restarts.set(event.name, false);
    } else if (event.type === 'restarted') {
      this.line(`${event.name} restarted, restart ${event.restart} (pid ${event.pid})`);
      if (this.restarts.has(event.name)) this.restarts.set(event.name, true);
    }
  }

  /** Reads everything once, prints what changed; returns how many examples are Ready. */
  async poll(): Promise<{ ready: number; total: number }> {
    const views = await Promise.all(this.options.watched.map((w) => this.pollObject(w)));
    await Promise.all(this.namespaces().map((ns) => this.pollNamespace(ns)));
    const present = views.filter((v) => !v.gone);
    const pending = present.filter((v) => !v.settled).length;
    if (this.restarts.size > 0 && [...this.restarts.values()].every(Boolean) && pending === 0) {
      this.line(
        `after the ${[...this.restarts.keys()].join(' and ')} restart: ${present.length} of ${views.length} examples Ready at their current generation with their Pods running, 0 pending — no reconcile lost`,
      );
      this.restarts.clear();
    }
    return { ready: views.filter((v) => v.ready).length, total: views.length };
  }

  private show(key: string, label: string, text: string): void {
    if (this.last.get(key) === text) return;
    this.last.set(key, text);
    this.line(`${label.padEnd(36)} ${text}`);
  }

  private async pollObject(w: WatchedObject): Promise<ObjectView> {
    let obj: ReadObject | undefined;
    let gone = false;
    try {
      obj = await this.objects.read({
        apiVersion: w.apiVersion,
        kind: w.kind,
        metadata: { name: w.name, ...(w.namespace ? { namespace: w.namespace } : {}) },
      });
    } catch (err) {
      // Not found once the example (or its namespace) is deleted; anything else (the API server
      // restarting) shows nothing new.
      gone = (err as { code?: number }).code === 404;
      if (!gone) return { ready: false, settled: false, gone: false };
    }
    const key = `${w.kind}/${w.namespace ?? ''}/${w.name}`;
    if (gone || !obj) {
      this.show(key, w.label, 'gone');
      return { ready: false, settled: false, gone: true };
    }
    const phase = obj.status?.phase ?? 'Pending';
    const message = obj.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    this.show(key, w.label, `${phase}${message ? ` — ${message}` : ''}`);
    const podsRunning =
      w.namespace && obj.metadata?.uid
        ? await this.pollPods(
            w,
            obj.metadata.uid,
            typeof obj.spec?.replicas === 'number' ? obj.spec.replicas : undefined,
          )
        : true;
    const ready = phase === 'Ready';
    const current = ready && obj.status?.observedGeneration === obj.metadata?.generation;
    return { ready, settled: current && podsRunning, gone: false };
  }

  /**
   * The Pods of the Deployments the object owns: "3/3 Running", with the others by state. The desired
   * count is the object's own `spec.replicas` when it has one (a Deployment scaled by hand shows 1/3),
   * else the Deployments'. Returns whether as many Pods run as desired (true without Deployments).
   */
  private async pollPods(w: WatchedObject, uid: string, wanted: number | undefined): Promise<boolean> {
    const namespace = w.namespace!;
    const key = `pods/${namespace}/${w.name}`;
    const deployments = await this.apps.listNamespacedDeployment({ namespace }).catch(() => undefined);
    if (!deployments) return false;
    const owned = deployments.items.filter((d) => d.metadata?.ownerReferences?.some((o) => o.uid === uid));
    if (owned.length === 0) {
      // Only for objects that had a Deployment: an App whose Deployment was deleted by hand.
      if (!this.last.has(key)) return true;
      this.show(key, `pods of ${w.label}`, 'no Deployment');
      return false;
    }
    let desired = 0;
    let running = 0;
    const others = new Map<string, number>();
    for (const d of owned) {
      desired += d.spec?.replicas ?? 1;
      const selector = Object.entries(d.spec?.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const pods = await this.core.listNamespacedPod({ namespace, labelSelector: selector }).catch(() => undefined);
      for (const pod of pods?.items ?? []) {
        const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        const state = pod.metadata?.deletionTimestamp
          ? 'Terminating'
          : pod.status?.phase === 'Running' && !ready
            ? 'Running, not ready'
            : (pod.status?.phase ?? 'Pending');
        if (state === 'Running') running += 1;
        else others.set(state, (others.get(state) ?? 0) + 1);
      }
    }
    if (wanted !== undefined) desired = wanted;
    const rest = [...others].map(([state, n]) => `, ${n} ${state}`).join('');
    this.show(key, `pods of ${w.label}`, `${running}/${desired} Running${rest}`);
    return running === desired && others.size === 0;
  }

  private namespaces(): string[] {
    return [...new Set(this.options.watched.flatMap((w) => (w.namespace ? [w.namespace] : [])))];
  }

  /** A namespace of the examples, shown once it is no longer Active (deleted by hand). */
  private async pollNamespace(name: string): Promise<void> {
    const key = `namespace/${name}`;
    let phase: string;
    try {
      phase = (await this.core.readNamespace({ name })).status?.phase ?? 'Active';
    } catch (err) {
      if ((err as { code?: number }).code !== 404) return;
      phase = 'gone';
    }
    if (phase === 'Active' && !this.last.has(key)) return;
    this.show(key, key, phase);
  }
}
