/**
 * The keys ready to deliver, taken round-robin across groups (Kubernetes namespaces) in proportion to
 * their weights: stride scheduling, as Temporal's fair task queue orders a backlog. Each group keeps its
 * keys first-in, first-out and a _pass_ that advances by `1 / weight` per key taken; the next key comes
 * from the group with the lowest pass (ties: the group that became ready first). A group that becomes
 * ready starts at the pass of the group served last, so a namespace with one change waits behind at most
 * one turn of each other namespace, not behind another namespace's ten thousand keys. Every operation is
 * O(log g) for g groups with ready keys.
 */

interface Group {
  readonly name: string;
  /** Ready keys in arrival order. */
  readonly keys: Set<string>;
  pass: number;
  /** When the group last became ready (ties between equal passes: earlier first). */
  seq: number;
  /** Its index in the heap while it has ready keys and is not blocked; -1 otherwise. */
  at: number;
  /** Whether the group's keys are held back ({@link FairReadySet.block}). */
  blocked: boolean;
}

/** A set of ready keys, taken weighted round-robin across their groups. */
export class FairReadySet {
  private readonly groups = new Map<string, Group>();
  /** Groups with ready keys, a binary min-heap by (pass, seq). */
  private readonly heap: Group[] = [];
  /** The pass of the group served last: where a group that becomes ready starts. */
  private virtualTime = 0;
  private seq = 0;
  private count = 0;

  /**
   * @param weightOf a group's weight (more than 0; a larger weight gets proportionally more turns)
   */
  constructor(private readonly weightOf: (group: string) => number = () => 1) {}

  /** Ready keys (those of blocked groups included). */
  get size(): number {
    return this.count;
  }

  /** Whether a key can be taken now: one is ready in a group that is not blocked. */
  get available(): boolean {
    return this.heap.length > 0;
  }

  /**
   * Holds a group's keys back: {@link take} passes over the group (its keys stay ready, in order) until
   * {@link unblock}. The bridge blocks a namespace while it has as many passes in flight as it may.
   */
  block(group: string): void {
    const g = this.groups.get(group) ?? this.newGroup(group);
    if (g.blocked) return;
    g.blocked = true;
    if (g.at >= 0) this.removeAt(g.at);
  }

  /** Lets a blocked group's keys be taken again, from the current turn (no turns saved up while blocked). */
  unblock(group: string): void {
    const g = this.groups.get(group);
    if (!g?.blocked) return;
    g.blocked = false;
    if (g.keys.size > 0) this.enqueue(g);
  }

  /** Unblocks every blocked group. */
  unblockAll(): void {
    for (const g of this.groups.values()) if (g.blocked) this.unblock(g.name);
  }

  private newGroup(group: string): Group {
    const g: Group = { name: group, keys: new Set(), pass: this.virtualTime, seq: 0, at: -1, blocked: false };
    this.groups.set(group, g);
    return g;
  }

  /** Puts a group that has ready keys in the heap, starting no earlier than the current turn. */
  private enqueue(g: Group): void {
    // Idle groups are remembered (forgetIdle) while they are ahead: emptying and refilling a group does
    // not win it turns it was already given.
    g.pass = Math.max(g.pass, this.virtualTime);
    g.seq = ++this.seq;
    g.at = this.heap.length;
    this.heap.push(g);
    this.up(g.at);
  }

  /** Ready keys by group (groups with none are left out), for metrics. */
  *depths(): IterableIterator<[string, number]> {
    for (const g of this.groups.values()) if (g.keys.size > 0) yield [g.name, g.keys.size];
  }

  /** Adds `key` of `group`; a key already ready keeps its place. */
  add(key: string, group: string): void {
    const g = this.groups.get(group) ?? this.newGroup(group);
    if (g.keys.has(key)) return;
    g.keys.add(key);
    this.count++;
    if (g.at < 0 && !g.blocked) this.enqueue(g);
  }

  /** Takes the next key, or `undefined` if none is ready (in a group that is not blocked). */
  take(): string | undefined {
    const g = this.heap[0];
    if (!g) return undefined;
    const key = g.keys.values().next().value as string;
    g.keys.delete(key);
    this.count--;
    this.virtualTime = g.pass;
    g.pass += 1 / this.weightOf(g.name);
    if (g.keys.size > 0) {
      this.down(0);
    } else {
      this.removeAt(0);
    }
    this.forgetIdle();
    return key;
  }

  /**
   * Forgets every group's turns; for when nothing is ready or in flight (with nothing waiting, no order
   * is owed to anyone), so an idle queue holds nothing.
   */
  reset(): void {
    if (this.count > 0 || [...this.groups.values()].some((g) => g.blocked)) return;
    this.groups.clear();
    this.virtualTime = 0; // passes stay small numbers
  }

  /**
   * Memory stays one entry per ready key plus at most one per group: an idle group is forgotten once the
   * others have caught up with it (it would start at the virtual time anyway); {@link reset} forgets
   * them all.
   */
  private forgetIdle(): void {
    // Two groups per take, oldest first (a Map iterates in insertion order), each put back at the end
    // while still needed: an idle group is looked at again after every other group has been.
    let checked = 0;
    for (const [name, g] of this.groups) {
      if (checked++ === 2) break;
      this.groups.delete(name);
      if (g.at >= 0 || g.blocked || g.keys.size > 0 || g.pass > this.virtualTime) this.groups.set(name, g);
    }
  }

  /** Removes the heap's entry at `i`. */
  private removeAt(i: number): void {
    const g = this.heap[i]!;
    const last = this.heap.pop()!;
    g.at = -1;
    if (last !== g) {
      this.heap[i] = last;
      last.at = i;
      this.down(i);
      this.up(last.at);
    }
  }

  private less(a: Group, b: Group): boolean {
    return a.pass < b.pass || (a.pass === b.pass && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i]!;
    const b = this.heap[j]!;
    this.heap[i] = b;
    this.heap[j] = a;
    a.at = j;
    b.at = i;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.heap[i]!, this.heap[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < this.heap.length && this.less(this.heap[l]!, this.heap[least]!)) least = l;
      if (r < this.heap.length && this.less(this.heap[r]!, this.heap[least]!)) least = r;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }
}
