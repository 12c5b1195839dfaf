import { Worker } from 'node:worker_threads';
import type { Route } from './exchange.ts';

export type VerifyRequest =
  | { type: 'trust'; vkey: string; policy: string }
  | { type: 'key-set'; version: number; keySet: unknown }
  | { type: 'verify'; id: number; version: number; route: Route; body: string; domain: string };

/**
 * The package's verdict on an answer: `code` null when it verified, NEVER_AUDITED for a proven
 * absence, else the failed step's code; `answer` is the domain's own answer a bundle or a private
 * lookup carried (null for a plain lookup, whose body is the answer).
 */
export interface Verification {
  code: string | null;
  message: string | null;
  answer: Record<string, unknown> | null;
}

export type VerifyReply = Verification & { id: number };

/**
 * The package's verifiers in worker threads: Ed25519 in pure JS costs ~2 ms a record, which on the
 * client's own event loop would make the checker, not the gateway, the bottleneck.
 */
export class VerifyPool {
  private readonly workers: { worker: Worker; keySetVersion: number }[];
  private readonly pending = new Map<number, { resolve: (v: Verification) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private turn = 0;
  private failure: Error | null = null;

  constructor(threads: number) {
    this.workers = Array.from({ length: threads }, () => {
      const worker = new Worker(new URL('./verify-worker.mjs', import.meta.url));
      worker.on('message', (reply: VerifyReply) => {
        const p = this.pending.get(reply.id);
        this.pending.delete(reply.id);
        p?.resolve({ code: reply.code, message: reply.message, answer: reply.answer });
      });
      worker.on('error', (error) => this.fail(new Error(`verify worker failed: ${error.message}`)));
      worker.on('exit', (code) => this.fail(new Error(`verify worker exited (${code})`)));
      return { worker, keySetVersion: -1 };
    });
  }

  /** Gives every worker the log's note verifier key and the witnesses' policy (text) bundles and private lookups are checked with. */
  trust(vkey: string, policy: string): void {
    for (const w of this.workers) w.worker.postMessage({ type: 'trust', vkey, policy } satisfies VerifyRequest);
  }

  verify(route: Route, body: string, domain: string, keySet: unknown, version: number): Promise<Verification> {
    if (this.failure) return Promise.reject(this.failure);
    const slot = this.workers[this.turn++ % this.workers.length]!;
    if (slot.keySetVersion !== version) {
      slot.worker.postMessage({ type: 'key-set', version, keySet } satisfies VerifyRequest);
      slot.keySetVersion = version;
    }
    const id = this.nextId++;
    return new Promise<Verification>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ type: 'verify', id, version, route, body, domain } satisfies VerifyRequest);
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  async close(): Promise<void> {
    this.failure ??= new Error('verify pool closed');
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}
