/**
 * The soak's witnesses: three real `mvr witness` servers (in this process, on loopback ports) of
 * the build's log, and the policy the build and the clients hold (two of three). The witness
 * outage (faults.ts) points two of them at a port nobody listens on in the build's policy file,
 * so the build cannot reach its quorum; the clients' policy never changes (a cosignature is
 * checked by its key, not by where the witness listens).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadLogKey } from '../../keyring/log-key.ts';
import { freePort } from '../../test/support/ports.ts';
import { policyText, startTestWitness, type TestWitness } from '../../test/support/witness.ts';

const NAMES = ['a', 'b', 'c'] as const;
const QUORUM = 'group two-of-three 2 a b c\nquorum two-of-three';

export class SoakWitnesses {
  private constructor(
    private readonly witnesses: TestWitness[],
    private readonly text: (down: readonly string[]) => string,
    /** The build's policy file (`--witness-policy`). */
    readonly policyFile: string,
  ) {}

  /** Starts the three witnesses of the log whose key is in `keysDir`, and writes the build's policy into `dir`. */
  static async start(keysDir: string, dir: string): Promise<SoakWitnesses> {
    const key = await loadLogKey(keysDir, undefined);
    if (!key) throw new Error(`no log key in ${keysDir}`);
    const log = { key };
    // Their state inside the soak's folder, which the soak removes whatever ends it.
    const witnesses = await Promise.all(NAMES.map((n) => startTestWitness(n, [log], join(dir, `witness-${n}`))));
    // Cosignatures carry the witness's time: the real one, read at each request.
    for (const w of witnesses) Object.defineProperty(w.now, 'ms', { get: () => Date.now() });
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    const text = (down: readonly string[]) =>
      policyText(
        log,
        witnesses.map((w, i) => ({ name: NAMES[i]!, vkey: w.key.vkey, url: down.includes(NAMES[i]!) ? deadUrl : w.url })),
        QUORUM,
      );
    const set = new SoakWitnesses(witnesses, text, join(dir, 'witnesses.policy'));
    await set.setDown([]);
    return set;
  }

  /** The clients' policy text: every witness where it listens. */
  get clientPolicy(): string {
    return this.text([]);
  }

  /** Rewrites the build's policy with the named witnesses unreachable (none: all back). */
  async setDown(down: readonly string[]): Promise<void> {
    await writeFile(this.policyFile, this.text(down));
  }

  async close(): Promise<void> {
    await Promise.all(this.witnesses.map((w) => w.close()));
  }
}
