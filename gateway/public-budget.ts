import { RateLimitedError } from '../core/errors/errors.ts';

/**
 * A concurrency budget of the unauthenticated routes that may read the store (the log's files and
 * its key): at most `concurrent` of them handled at once and `waiting` more queued, so a flood
 * of them cannot take the store connections keyed lookups need. Past that, RATE_LIMITED at once
 * (429, retry in a second): the requests without a key wait their turn, never keyed ones.
 */
export class ConcurrencyBudget {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    readonly concurrent: number,
    readonly waiting: number,
  ) {}

  /** `work`, once a turn is free. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active < this.concurrent) this.active++;
    else {
      if (this.queue.length >= this.waiting)
        throw new RateLimitedError('too many requests without a key at once; try again in a second', 1);
      // The turn is handed over by the request that ends (see below), so `active` stays as it is.
      await new Promise<void>((resolve) => this.queue.push(resolve));
    }
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Requests handled and waiting now. */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.queue.length };
  }
}
