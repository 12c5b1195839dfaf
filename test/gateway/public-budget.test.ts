/**
 * The unauthenticated routes' concurrency budget: at most `concurrent` at once, `waiting` more
 * queued in order, and past that RATE_LIMITED at once, so a flood of them never takes the store
 * connections keyed lookups need. Driven by promises the test settles, never by time.
 */
import { describe, expect, it } from 'vitest';
import { ConcurrencyBudget } from '../../gateway/public-budget.ts';

/** A piece of work that runs until the test ends it, saying when it started. */
function held() {
  let end!: () => void;
  let begin!: () => void;
  let started = false;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const began = new Promise<void>((resolve) => (begin = resolve));
  return {
    work: async () => {
      started = true;
      begin();
      await ended;
      return 'done';
    },
    end,
    began,
    get started() {
      return started;
    },
  };
}

describe('the unauthenticated routes budget', () => {
  it('runs `concurrent` at once, queues `waiting` in order, refuses the rest at once, and hands each freed turn on', async () => {
    const budget = new ConcurrencyBudget(1, 1);
    const [a, b, c] = [held(), held(), held()];
    const first = budget.run(a.work);
    const second = budget.run(b.work);
    const third = budget.run(c.work).catch((error: { code?: string; retryAfterSeconds?: number }) => error);
    expect(await third).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 1 });
    expect(c.started).toBe(false);
    expect(budget.load).toEqual({ active: 1, waiting: 1 });
    expect(a.started).toBe(true);
    expect(b.started).toBe(false);
    a.end();
    expect(await first).toBe('done');
    await b.began;
    expect(budget.load).toEqual({ active: 1, waiting: 0 });
    b.end();
    expect(await second).toBe('done');
    expect(budget.load).toEqual({ active: 0, waiting: 0 });
  });

  it('a failed piece of work frees its turn too', async () => {
    const budget = new ConcurrencyBudget(1, 0);
    await expect(budget.run(async () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(await budget.run(async () => 'next')).toBe('next');
  });
});
