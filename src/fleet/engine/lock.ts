/** One lock that every spawn pass queues on, so passes never interleave. */
export class SerialLock {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  get queued(): number {
    return this.waiting;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.waiting++;
    const next = this.tail.then(
      () => {
        this.waiting--;
        return fn();
      },
      () => {
        this.waiting--;
        return fn();
      },
    );
    this.tail = next.catch(() => undefined);
    return next;
  }
}
