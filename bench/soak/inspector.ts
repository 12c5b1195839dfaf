import { WebSocket } from 'undici';

/**
 * A minimal Chrome DevTools Protocol client for the gateway's own V8 (the gateway is started
 * with `--inspect=127.0.0.1:<port>`): forces a full GC and reads the heap, so retained memory
 * can be told apart from garbage V8 has not collected yet. Loopback only; every call times out.
 */
export class HeapInspector {
  private ws: WebSocket | null = null;
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  constructor(private readonly port: number) {}

  /** Connects to the first target listed at /json/list (bounded: 50 tries, 100 ms apart). */
  async connect(): Promise<void> {
    let url: string | undefined;
    for (let i = 0; i < 50 && !url; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/json/list`, { signal: AbortSignal.timeout(1000) });
        url = ((await res.json()) as { webSocketDebuggerUrl?: string }[])[0]?.webSocketDebuggerUrl;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!url) throw new Error(`no inspector target on 127.0.0.1:${this.port}`);
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('inspector connection timed out')), 5000);
      ws.addEventListener(
        'open',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
      ws.addEventListener(
        'error',
        () => {
          clearTimeout(timer);
          reject(new Error('inspector connection failed'));
        },
        { once: true },
      );
    });
    ws.addEventListener('message', (event) => {
      const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const p = msg.id === undefined ? undefined : this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id!);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new Error(msg.error.message));
      else p.resolve(msg.result);
    });
    ws.addEventListener('close', () => {
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error('inspector closed'));
      }
      this.pending.clear();
    });
    this.ws = ws;
  }

  private call<T>(method: string, params?: Record<string, unknown>, timeoutMs = 10_000): Promise<T> {
    const ws = this.ws;
    if (!ws) return Promise.reject(new Error('inspector not connected'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} timed out`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * Full GC, then the V8 heap in use and allocated, and the memory outside V8's heap the
   * gateway's own `process.memoryUsage()` reports (Buffers and other external memory), MB: what
   * RSS holds beside the heap is then named, not guessed.
   */
  async heapAfterGc(): Promise<{ usedMb: number; totalMb: number; externalMb: number; arrayBuffersMb: number }> {
    await this.call('HeapProfiler.collectGarbage');
    const u = await this.call<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage');
    const m = await this.call<{ result: { value?: { external: number; arrayBuffers: number } } }>('Runtime.evaluate', {
      expression: '(() => { const m = process.memoryUsage(); return { external: m.external, arrayBuffers: m.arrayBuffers }; })()',
      returnByValue: true,
    });
    const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
    const outside = m.result.value ?? { external: Number.NaN, arrayBuffers: Number.NaN };
    return { usedMb: mb(u.usedSize), totalMb: mb(u.totalSize), externalMb: mb(outside.external), arrayBuffersMb: mb(outside.arrayBuffers) };
  }

  close(): void {
    this.ws?.close();
    this.ws = null;
  }
}
