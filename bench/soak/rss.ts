import { rssKb } from './gateway-process.ts';
import type { HeapInspector } from './inspector.ts';

export interface RssSample {
  /** ms since the load started. */
  t: number;
  kb: number;
}

/** One controlled reading: RSS right after a full GC forced in the gateway (or a raw sample without the inspector). */
export interface RssPoint {
  atMs: number;
  rssMb: number;
  /** V8 heap in use after that GC (null without the inspector). */
  heapUsedMb: number | null;
  /** Memory outside V8's heap the gateway reports after that GC (Buffers and other external memory; null without the inspector). */
  externalMb: number | null;
  afterGc: boolean;
}

export interface RssSummary {
  /** How start and end were taken. */
  method: 'after-full-gc' | 'raw-median-of-3';
  warmupMs: number;
  startMb: number;
  endMb: number;
  growthPct: number;
  start: RssPoint;
  end: RssPoint;
  /** Highest of the once-a-second samples, MB, and the kernel's own peak (VmHWM). */
  maxMb: number;
  peakHwmMb: number;
  /** The once-a-second samples: medians of 3 after the warm-up and at the end. They move with GC timing. */
  raw: { samples: number; startMb: number; endMb: number; growthPct: number };
  heapGrowthPct: number | null;
  /** Every sample: [seconds since the load started, MB]. */
  series: [number, number][];
  /** Every controlled reading (after a full GC), in order: where the growth went, and when it stopped. */
  points: RssPoint[];
}

const mb = (kb: number) => Math.round((kb / 1024) * 10) / 10;
const pct = (a: number, b: number) => Math.round(((b - a) / a) * 1000) / 10;

/**
 * The gateway's resident memory: VmRSS once a second (max, series), plus two controlled
 * readings, at the end of the warm-up and just before the load stops, each taken right after a
 * full GC forced through the gateway's inspector. Raw samples of a Node process swing by tens of
 * MB with the GC's timing (garbage not collected yet is resident too); the readings after a
 * full GC compare like with like, so their growth is what retained memory did.
 */
export class RssSampler {
  readonly samples: RssSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private hwmKb = 0;
  private reading = false;
  start?: RssPoint;
  end?: RssPoint;
  /** Every controlled reading taken, start and end among them. */
  readonly points: RssPoint[] = [];

  constructor(
    private readonly pid: number,
    private readonly t0: number,
    private readonly inspector: HeapInspector | null,
  ) {}

  begin(): void {
    const take = () => {
      if (this.reading) return;
      this.reading = true;
      rssKb(this.pid)
        .then(({ rssKb: kb, hwmKb }) => {
          if (Number.isFinite(kb)) this.samples.push({ t: performance.now() - this.t0, kb });
          if (Number.isFinite(hwmKb)) this.hwmKb = hwmKb;
        })
        .catch(() => undefined)
        .finally(() => (this.reading = false));
    };
    take();
    this.timer = setInterval(take, 1000);
  }

  /** A controlled reading: full GC in the gateway, then VmRSS; kept in `points`. */
  async point(): Promise<RssPoint> {
    const p = await this.read();
    this.points.push(p);
    return p;
  }

  private async read(): Promise<RssPoint> {
    const atMs = Math.round(performance.now() - this.t0);
    if (this.inspector) {
      try {
        const heap = await this.inspector.heapAfterGc();
        const { rssKb: kb } = await rssKb(this.pid);
        return { atMs, rssMb: mb(kb), heapUsedMb: heap.usedMb, externalMb: heap.externalMb, afterGc: true };
      } catch {
        // fall through to a raw reading
      }
    }
    const { rssKb: kb } = await rssKb(this.pid);
    return { atMs, rssMb: mb(kb), heapUsedMb: null, externalMb: null, afterGc: false };
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const last = await rssKb(this.pid).catch(() => null);
    if (last && Number.isFinite(last.rssKb)) {
      this.samples.push({ t: performance.now() - this.t0, kb: last.rssKb });
      this.hwmKb = last.hwmKb;
    }
  }

  summary(warmupMs: number): RssSummary | null {
    const after = this.samples.filter((s) => s.t >= warmupMs);
    if (after.length < 4) return null;
    const median3 = (xs: RssSample[]) => [...xs].map((s) => s.kb).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rawStart = median3(after.slice(0, 3)),
      rawEnd = median3(after.slice(-3));
    const controlled = this.start?.afterGc && this.end?.afterGc;
    const start: RssPoint = controlled
      ? this.start!
      : { atMs: Math.round(after[0]!.t), rssMb: mb(rawStart), heapUsedMb: null, externalMb: null, afterGc: false };
    const end: RssPoint = controlled
      ? this.end!
      : { atMs: Math.round(after.at(-1)!.t), rssMb: mb(rawEnd), heapUsedMb: null, externalMb: null, afterGc: false };
    return {
      method: controlled ? 'after-full-gc' : 'raw-median-of-3',
      warmupMs,
      startMb: start.rssMb,
      endMb: end.rssMb,
      growthPct: pct(start.rssMb, end.rssMb),
      start,
      end,
      maxMb: mb(Math.max(...this.samples.map((s) => s.kb))),
      peakHwmMb: mb(this.hwmKb),
      raw: { samples: this.samples.length, startMb: mb(rawStart), endMb: mb(rawEnd), growthPct: pct(rawStart, rawEnd) },
      heapGrowthPct: start.heapUsedMb !== null && end.heapUsedMb !== null ? pct(start.heapUsedMb, end.heapUsedMb) : null,
      series: this.samples.map((x) => [Math.round(x.t / 100) / 10, mb(x.kb)]),
      points: this.points,
    };
  }
}
