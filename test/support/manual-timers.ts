/** Hand-driven timers for tests: nothing fires until `advance(ms)` moves the clock. */
export class ManualTimers {
  now = 0;
  private seq = 0;
  private queue: { id: number; at: number; fn: () => void }[] = [];
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.queue.push({ id, at: this.now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.queue = this.queue.filter((t) => t.id !== handle);
  }
  get pending(): number {
    return this.queue.length;
  }
  /** Run every timer due within `ms`, in time order (timers added meanwhile included). */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.queue[0];
      if (!next || next.at > end) break;
      this.queue.shift();
      this.now = next.at;
      next.fn();
    }
    this.now = end;
  }
}
