/**
 * `run`, made so that a call while one is in flight joins it instead of starting another: a store
 * that answers slowly has one refresh of it under way at a time, never a stack of them (a timer
 * tick, a lookup that wants the live build confirmed and a retry all wait for the same one).
 */
export function oneAtATime(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  return () => {
    running ??= run().finally(() => {
      running = null;
    });
    return running;
  };
}
