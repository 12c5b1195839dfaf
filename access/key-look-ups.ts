import { KEY_LOOKUP_LIMITS } from '../core/limits.ts';

/**
 * The looks at the API key table for ids the gateway's snapshot does not hold, for the file and
 * Redis tables alike: one look per id at a time, shared by every request asking for it meanwhile,
 * and an id the table did not hold refused from memory for `KEY_LOOKUP_LIMITS.unknownIdTtlMs`
 * (core/limits.ts) or until {@link forgetUnknown} (a reload that found the keys changed). So the
 * same made-up id asked a thousand times costs one look, and a key made a moment ago is found on
 * its first request: its id was never looked at before, or the reload that brought it forgot it.
 */
export class KeyLookUps {
  /** The look under way for each id. */
  private readonly looking = new Map<string, Promise<void>>();
  /** Ids the table did not hold, and until when (by `now`) they are refused without a look; oldest first. */
  private unknown = new Map<string, number>();
  /** Looks at the table since start (for metrics). */
  count = 0;

  constructor(
    /** One look at the table: whether it holds `id` (the snapshot is given the entry when it does). */
    private readonly look: (id: string) => Promise<boolean>,
    private readonly now: () => number,
  ) {}

  /** Whether `id` was looked up lately and the table did not hold it: refuse it without a look. */
  knownUnknown(id: string): boolean {
    const until = this.unknown.get(id);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.unknown.delete(id);
    return false;
  }

  /** Looks `id` up, or waits for the look under way; a look that fails is not remembered. */
  lookUp(id: string): Promise<void> {
    let pending = this.looking.get(id);
    if (!pending) {
      pending = this.lookOnce(id).finally(() => this.looking.delete(id));
      this.looking.set(id, pending);
    }
    return pending;
  }

  /** Forgets every id remembered as unknown: the keys changed, and one of them may be a key now. */
  forgetUnknown(): void {
    this.unknown = new Map();
  }

  private async lookOnce(id: string): Promise<void> {
    this.count++;
    if (await this.look(id)) return;
    if (this.unknown.size >= KEY_LOOKUP_LIMITS.unknownIds) this.unknown.delete(this.unknown.keys().next().value!);
    this.unknown.set(id, this.now() + KEY_LOOKUP_LIMITS.unknownIdTtlMs);
  }
}
