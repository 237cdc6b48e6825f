/**
 * The reflector of one watched resource (client-go's `Reflector`, kube-rs's `watcher`): a paginated
 * list (pages of 500 with continue tokens), then a watch from the list's resourceVersion with
 * bookmarks requested and a server-side timeout with jitter. A finished watch is resumed from the
 * last seen resourceVersion (bookmarks keep it fresh, so an API server restart does not force a
 * relist); 410 Gone relists and emits deletes for objects that vanished; any other error restarts
 * with exponential backoff and jitter; an inactivity watchdog notices a silent connection. A resource
 * marked `metadataOnly` is listed and watched as `PartialObjectMetadata` (client-go's metadata
 * informer): the server sends no data. Every object passes through the resource's cache transform
 * (cache-transform.ts) as it arrives, list pages included, so no more of it than the bridge uses is
 * held even while a long list is read.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Backoff, type BackoffOptions } from './backoff';
import { ObjectCache, objectKey } from './cache';
import { cacheTransformFor } from './cache-transform';
import { collectionPath, kubeRequest, kubeWatch } from './kube-http';
import { type Clock, type KubeObject, type Random, sleepOn, systemClock, type WatchedResource } from './types';
import type { ErrorCode } from '../core/errors';

/** What a reflector reports. `replay` marks objects of the first list (the cache being filled). */
export interface ReflectorEvent {
  readonly type: 'added' | 'modified' | 'deleted';
  readonly object: KubeObject;
  /** The cached object before this event (modified, deleted). */
  readonly previous?: KubeObject;
  readonly replay: boolean;
}

/** Callbacks of a reflector. */
export interface ReflectorHandler {
  onEvent(event: ReflectorEvent): void;
  /** The first list completed (the cache holds the cluster's state). */
  onSynced?(): void;
  /** A watch event line was received (by event type, including BOOKMARK and ERROR). */
  onWatchEvent?(type: string): void;
  /** A relist started; `reason` is `initial`, `gone` (410) or `expired` (continue token). */
  onList?(reason: string): void;
  /** The watch is restarted after `reason` (`error`, `watchdog`, `timeout`). */
  onWatchRestart?(reason: string, delayMs: number, err?: unknown): void;
}

/** Options of {@link Reflector}. */
export interface ReflectorOptions {
  readonly kc: k8s.KubeConfig;
  readonly resource: WatchedResource;
  /** Watch only this namespace (namespaced kinds). @default all namespaces */
  readonly namespace?: string;
  /** Label selector applied to list and watch. @default none */
  readonly labelSelector?: string;
  readonly handler: ReflectorHandler;
  readonly log: Logger;
  /** Objects per list page. @default 500 */
  readonly pageSize?: number;
  /** Server-side watch timeout; each watch asks for a uniform value in [t, 2t). @default 300 */
  readonly watchTimeoutSeconds?: number;
  /**
   * Restart a watch that delivered nothing (not even a bookmark) for this long. The API server sends
   * a bookmark about every two minutes on an idle watch (seen with v1.35). @default 300_000
   */
  readonly inactivityTimeoutMs?: number;
  /** Timeout of each list page request. @default 60_000 */
  readonly listTimeoutMs?: number;
  /** Restart backoff. @default 800 ms doubling to 30 s, jitter 0.2, reset after 2 min without failure */
  readonly backoff?: BackoffOptions;
  /** @default the system clock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: Random;
}

/** Metadata-only lists, falling back to full objects on servers that cannot convert (client-go's order). */
export const metadataListAccept = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** Metadata-only watch events, with the same fallback. */
export const metadataWatchAccept = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

interface ListResponse {
  readonly metadata?: { resourceVersion?: string; continue?: string };
  readonly items?: KubeObject[];
}

interface WatchStatus {
  readonly code?: number;
  readonly message?: string;
}

type WatchOutcome = { kind: 'ended'; events: number } | { kind: 'gone' } | { kind: 'error'; err: unknown };

/** An error that means "the resourceVersion is too old: relist". */
class GoneError extends Error {
  readonly code: ErrorCode = 'ERR_K8S_GONE';
}

/** Lists and watches one resource into its {@link ObjectCache} until stopped. */
export class Reflector {
  /** The objects of this resource, as its cache transform keeps them. */
  readonly cache: ObjectCache;
  private readonly opts: ReflectorOptions;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly backoff: Backoff;
  private readonly stopController = new AbortController();
  private lastResourceVersion = '';
  private hasSynced = false;
  private running: Promise<void> | undefined;

  constructor(options: ReflectorOptions) {
    this.opts = options;
    this.cache = new ObjectCache(cacheTransformFor(options.resource));
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff({ clock: this.clock, random: this.random, ...options.backoff });
  }

  /** Whether the first list has completed. */
  get synced(): boolean {
    return this.hasSynced;
  }

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.lastResourceVersion;
  }

  /** Starts listing and watching in the background. */
  start(): void {
    this.running ??= this.run().catch((err: unknown) => this.opts.log.error({ err }, 'reflector crashed'));
  }

  /** Stops the watch and waits for the loop to end. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<void> {
    let needList: 'initial' | 'gone' | 'expired' | undefined = 'initial';
    while (!this.stopped) {
      if (needList) {
        try {
          this.opts.handler.onList?.(needList);
          await this.list(!this.hasSynced);
          needList = undefined;
        } catch (err) {
          if (this.stopped) return;
          if (err instanceof GoneError) {
            needList = 'expired';
            continue;
          }
          const delay = this.backoff.next();
          this.opts.handler.onWatchRestart?.('list-error', delay, err);
          this.opts.log.warn({ err, delayMs: delay }, 'list failed; retrying');
          await sleepOn(this.clock, delay, this.stopController.signal);
          continue;
        }
      }
      const started = this.clock.now();
      const outcome = await this.watchOnce();
      if (this.stopped) return;
      if (outcome.kind === 'gone') {
        this.opts.log.info({ resourceVersion: this.lastResourceVersion }, 'watch expired (410); relisting');
        needList = 'gone';
        continue;
      }
      if (outcome.kind === 'ended' && (outcome.events > 0 || this.clock.now() - started >= 1_000)) {
        // The server's timeout ended the watch: resume at once from the last resourceVersion.
        this.opts.handler.onWatchRestart?.('timeout', 0);
        continue;
      }
      const err = outcome.kind === 'error' ? outcome.err : new Error('watch closed immediately');
      const delay = this.backoff.next();
      const reason = (err as { code?: string }).code === ('ERR_WATCHDOG' satisfies ErrorCode) ? 'watchdog' : 'error';
      this.opts.handler.onWatchRestart?.(reason, delay, err);
      this.opts.log.warn({ err, delayMs: delay, reason }, 'watch failed; restarting');
      await sleepOn(this.clock, delay, this.stopController.signal);
    }
  }

  /** Lists every page, then replaces the cache's contents, emitting the differences. */
  private async list(initial: boolean): Promise<void> {
    const { kc, resource, namespace, labelSelector } = this.opts;
    const path = collectionPath(resource, namespace);
    const items: KubeObject[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    let pages = 0;
    do {
      pages++;
      const res = await kubeRequest<ListResponse & WatchStatus>(kc, path, {
        query: { limit: this.opts.pageSize ?? 500, continue: token, labelSelector },
        ...(resource.metadataOnly ? { accept: metadataListAccept } : {}),
        timeoutMs: this.opts.listTimeoutMs ?? 60_000,
        signal: this.stopController.signal,
      });
      if (res.status === 410) throw new GoneError('continue token expired');
      if (res.status !== 200 || !res.body) {
        throw Object.assign(new Error(`list ${path}: HTTP ${res.status} ${res.body?.message ?? ''}`), {
          statusCode: res.status,
        });
      }
      // Transformed as each page arrives: a list of large objects is never held whole.
      for (const item of res.body.items ?? []) items.push(this.transformed(item));
      token = res.body.metadata?.continue || undefined;
      resourceVersion = res.body.metadata?.resourceVersion ?? resourceVersion;
    } while (token);

    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const { previous, stored } = this.cache.store(obj);
      if (initial) this.opts.handler.onEvent({ type: 'added', object: stored, replay: true });
      else if (!previous) this.opts.handler.onEvent({ type: 'added', object: stored, replay: false });
      else if (previous.metadata.resourceVersion !== stored.metadata.resourceVersion)
        this.opts.handler.onEvent({ type: 'modified', object: stored, previous, replay: false });
    }
    for (const key of this.cache.keys()) {
      if (seen.has(key)) continue;
      const previous = this.cache.delete(key)!;
      this.opts.handler.onEvent({ type: 'deleted', object: previous, previous, replay: false });
    }
    this.lastResourceVersion = resourceVersion;
    this.opts.log.info({ objects: items.length, pages, resourceVersion, initial }, 'listed');
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.opts.handler.onSynced?.();
    }
  }

  private get apiVersion(): string {
    const r = this.opts.resource;
    return r.group ? `${r.group}/${r.version}` : r.version;
  }

  /** One watch request, until the server ends it, an error, 410, the watchdog or stop. */
  private watchOnce(): Promise<WatchOutcome> {
    const { kc, resource, namespace, labelSelector } = this.opts;
    const base = this.opts.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.max(1, Math.floor(base * (1 + this.random())));
    const inactivityMs = this.opts.inactivityTimeoutMs ?? 300_000;
    return new Promise<WatchOutcome>((resolve) => {
      let settled = false;
      let events = 0;
      const controller = new AbortController();
      let cancelWatchdog: () => void = () => {};
      const finish = (outcome: WatchOutcome): void => {
        if (settled) return;
        settled = true;
        cancelWatchdog();
        this.stopController.signal.removeEventListener('abort', onStop);
        controller.abort();
        resolve(outcome);
      };
      const armWatchdog = (): void => {
        cancelWatchdog();
        cancelWatchdog = this.clock.setTimeout(() => {
          const err = Object.assign(new Error(`no watch event for ${inactivityMs} ms`), {
            code: 'ERR_WATCHDOG' satisfies ErrorCode,
          });
          finish({ kind: 'error', err });
        }, inactivityMs);
      };
      const onStop = (): void => finish({ kind: 'ended', events });
      this.stopController.signal.addEventListener('abort', onStop, { once: true });
      armWatchdog();
      const onLine = (type: string, obj: unknown): void => {
        if (settled) return;
        armWatchdog();
        this.opts.handler.onWatchEvent?.(type);
        if (type === 'ERROR') {
          const status = obj as WatchStatus;
          if (status.code === 410) finish({ kind: 'gone' });
          else finish({ kind: 'error', err: new Error(`watch error ${status.code}: ${status.message}`) });
          return;
        }
        const object = obj as KubeObject;
        const rv = object.metadata?.resourceVersion;
        if (rv) this.lastResourceVersion = rv;
        if (type === 'BOOKMARK') return;
        events++;
        this.apply(type, object);
      };
      const onDone = (err: unknown): void => {
        if (settled) return;
        if (err && (err as { status?: number }).status === 410) finish({ kind: 'gone' });
        else if (err) finish({ kind: 'error', err });
        else finish({ kind: 'ended', events });
      };
      kubeWatch(kc, collectionPath(resource, namespace), {
        query: { allowWatchBookmarks: true, resourceVersion: this.lastResourceVersion, timeoutSeconds, labelSelector },
        ...(resource.metadataOnly ? { accept: metadataWatchAccept } : {}),
        signal: controller.signal,
        onEvent: onLine,
      }).then(
        () => onDone(null),
        (err: unknown) => onDone(err),
      );
    });
  }

  /**
   * What the cache keeps of a listed or watched object (the resource's cache transform). Lists omit
   * apiVersion/kind on items and metadata-only events are `PartialObjectMetadata`: both are set to the
   * resource's, so the cache is uniform.
   */
  private transformed(obj: KubeObject): KubeObject {
    return this.cache.transform({ ...obj, apiVersion: this.apiVersion, kind: this.opts.resource.kind });
  }

  private apply(type: string, event: KubeObject): void {
    const obj = this.transformed(event);
    const key = objectKey(obj);
    if (type === 'DELETED') {
      const previous = this.cache.delete(key);
      this.opts.handler.onEvent({ type: 'deleted', object: obj, previous, replay: false });
      return;
    }
    const { previous, stored } = this.cache.store(obj);
    if (previous?.metadata.resourceVersion === stored.metadata.resourceVersion) return;
    this.opts.handler.onEvent(
      previous
        ? { type: 'modified', object: stored, previous, replay: false }
        : { type: 'added', object: stored, replay: false },
    );
  }
}
