/**
 * A TCP proxy on a link between two of homeostat's parties (worker ↔ Temporal, bridge ↔ kube-apiserver,
 * steps ↔ PostgreSQL), for partition tests. Open, it forwards bytes both ways. Told to:
 * - `blackhole`: nothing passes either way and nothing is answered — as a partition: bytes already sent
 *   wait (TCP would retransmit them) and pass once the link heals, if both ends are still there; new
 *   connections are accepted and wait too;
 * - `reset`: every connection is reset (RST), and new ones are reset as they arrive;
 * - `latency(ms)`: every chunk is delivered `ms` later, in order.
 * It counts connections and bytes per second, so a test can see what a healing link carried (a retry
 * storm is many connections or many bytes at once).
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/** What the link does now. */
export type LinkState = 'open' | 'blackhole' | 'reset';

/** Traffic in one second. */
export interface SecondOfTraffic {
  /** Epoch seconds. */
  readonly second: number;
  connections: number;
  /** Bytes from the client side to the server side. */
  bytesUp: number;
  bytesDown: number;
}

/** One direction of a connection: chunks wait here while the link is blackholed or slow. */
class Pipe {
  private readonly queue: { at: number; chunk: Buffer }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly proxy: TcpProxy,
    private readonly count: (bytes: number) => void,
  ) {
    from.on('data', (chunk: Buffer) => {
      this.queue.push({ at: Date.now() + proxy.latencyMs, chunk });
      // Backpressure: a blackholed link stops reading, as a full TCP window would.
      if (this.queue.length > 64) from.pause();
      this.flush();
    });
  }

  flush(): void {
    if (this.timer) return;
    while (this.queue.length > 0 && this.proxy.state === 'open') {
      const next = this.queue[0]!;
      const wait = next.at - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.flush();
        }, wait);
        return;
      }
      this.queue.shift();
      this.count(next.chunk.length);
      if (!this.to.destroyed) this.to.write(next.chunk);
    }
    if (this.queue.length <= 64 && this.proxy.state === 'open') this.from.resume();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** A proxy listening on 127.0.0.1 in front of `target`. */
export class TcpProxy {
  state: LinkState = 'open';
  latencyMs = 0;
  private readonly pairs = new Set<{ client: Socket; server: Socket; pipes: Pipe[] }>();
  private readonly seconds = new Map<number, SecondOfTraffic>();

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** Starts a proxy on a free port of 127.0.0.1 in front of `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer({ pauseOnConnect: true });
    const proxy = new TcpProxy(server, target);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The proxy's port on 127.0.0.1. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The proxy's `host:port`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private tally(): SecondOfTraffic {
    const second = Math.floor(Date.now() / 1000);
    let s = this.seconds.get(second);
    if (!s) {
      s = { second, connections: 0, bytesUp: 0, bytesDown: 0 };
      this.seconds.set(second, s);
    }
    return s;
  }

  private accept(client: Socket): void {
    this.tally().connections++;
    client.on('error', () => {});
    if (this.state === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const server = connect(this.target.port, this.target.host);
    server.on('error', () => {});
    server.pause();
    const pair = {
      client,
      server,
      pipes: [
        new Pipe(client, server, this, (n) => (this.tally().bytesUp += n)),
        new Pipe(server, client, this, (n) => (this.tally().bytesDown += n)),
      ],
    };
    this.pairs.add(pair);
    const end = (): void => {
      if (!this.pairs.delete(pair)) return;
      for (const p of pair.pipes) p.stop();
      client.destroy();
      server.destroy();
    };
    client.on('close', end);
    server.on('close', end);
    if (this.state === 'open') {
      client.resume();
      server.resume();
    }
  }

  /** Sets what the link does; healing (`open`) lets waiting bytes pass. */
  set(state: LinkState): void {
    this.state = state;
    for (const pair of [...this.pairs]) {
      if (state === 'reset') {
        pair.client.resetAndDestroy();
        pair.server.resetAndDestroy();
      } else if (state === 'blackhole') {
        pair.client.pause();
        pair.server.pause();
      } else {
        for (const p of pair.pipes) p.flush();
        pair.client.resume();
        pair.server.resume();
      }
    }
  }

  /** Delays every chunk by `ms` from now on (0: none). */
  latency(ms: number): void {
    this.latencyMs = ms;
  }

  /** Open connections through the proxy. */
  get openConnections(): number {
    return this.pairs.size;
  }

  /** Traffic per second from `since` (epoch ms) to `until`, seconds without traffic included as zeros. */
  traffic(since: number, until: number = Date.now()): SecondOfTraffic[] {
    const out: SecondOfTraffic[] = [];
    for (let s = Math.floor(since / 1000); s <= Math.floor(until / 1000); s++) {
      out.push(this.seconds.get(s) ?? { second: s, connections: 0, bytesUp: 0, bytesDown: 0 });
    }
    return out;
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.server.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Sums traffic: connections, bytes up and down. */
export function totalTraffic(seconds: readonly SecondOfTraffic[]): {
  connections: number;
  bytesUp: number;
  bytesDown: number;
  peakConnectionsPerSecond: number;
} {
  return {
    connections: seconds.reduce((n, s) => n + s.connections, 0),
    bytesUp: seconds.reduce((n, s) => n + s.bytesUp, 0),
    bytesDown: seconds.reduce((n, s) => n + s.bytesDown, 0),
    peakConnectionsPerSecond: Math.max(0, ...seconds.map((s) => s.connections)),
  };
}
