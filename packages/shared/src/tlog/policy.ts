import { PolicyError } from '../errors.ts';
import { equalBytes, type Sha256 } from './merkle.ts';
import { COSIGNATURE_ED25519, COSIGNATURE_ML_DSA_44, type NoteError, type NoteVerifierKey, parseTypedVerifierKey } from './note.ts';

/**
 * C2SP transparency log policies (c2sp.org/tlog-policy): which logs are trusted, which
 * witnesses, and the quorum of witnesses whose cosignatures make a checkpoint valid.
 */

export interface PolicyLog {
  vkey: NoteVerifierKey;
  url: string | null;
}

export interface PolicyWitness {
  /** The witness's name in the policy (for groups and the quorum); its key has a name of its own. */
  name: string;
  /** An Ed25519 cosignature key (type 0x04). */
  vkey: NoteVerifierKey;
  /** The witness's submission prefix (c2sp.org/tlog-witness), an http(s) URL, when given. */
  url: string | null;
}

/** A quorum rule: one witness, or a group met when at least k of its members are. */
export type QuorumRule = { name: string; witness: true } | { name: string; witness: false; k: number; members: QuorumRule[] };

export interface TlogPolicy {
  logs: PolicyLog[];
  witnesses: PolicyWitness[];
  /** null for `quorum none`: no cosignature needed. */
  quorum: QuorumRule | null;
}

export { PolicyError };

const ED25519 = 0x01;

/** Parses a policy's text; `source` names it in errors (a file name). */
export function parsePolicy(sha256: Sha256, text: string, source = 'policy'): TlogPolicy {
  if (typeof text !== 'string') throw new PolicyError(source, 0, `the policy is ${typeof text}, not the text of a policy file`);
  const logs: PolicyLog[] = [];
  const witnesses: PolicyWitness[] = [];
  // Witnesses and groups share one namespace; `none` is predefined and never a member.
  const names = new Map<string, QuorumRule>();
  // c2sp.org/tlog-policy: a name is a member of at most one group, so one witness never counts twice
  // towards a threshold (`group A any w1 w2` + `group B 2 A w1` would let w1 alone meet B).
  const memberOf = new Map<string, string>();
  let quorum: QuorumRule | null | undefined;
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const n = i + 1;
    const fail = (message: string): never => {
      throw new PolicyError(source, n, message);
    };
    // c2sp.org/tlog-policy, like every C2SP text format, ends lines with LF alone: a CR before it is
    // refused by name, since an editor that saved CRLF is the usual cause and the fix is to re-save.
    if (raw.endsWith('\r')) fail('ends with CRLF: a policy file ends its lines with LF alone (save it with LF line ends)');
    // Tab and newline are the only control characters a policy may hold.
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(raw)) fail('a control character other than tab (only tab and newline are allowed)');
    const words = raw.split(/[ \t]+/).filter((w) => w !== '');
    if (words.length === 0 || words[0]!.startsWith('#')) return;
    const [keyword, ...args] = words as [string, ...string[]];
    const key = (text: string, what: string) => {
      try {
        return parseTypedVerifierKey(sha256, text);
      } catch (error) {
        return fail(`${what} key: ${(error as NoteError).message}`);
      }
    };
    const defined = (name: string, what: string) => {
      if (name === 'none') fail(`"none" is predefined and cannot name a ${what}`);
      if (names.has(name)) fail(`"${name}" is already defined (witnesses and groups share one namespace)`);
    };
    switch (keyword) {
      case 'log': {
        if (args.length < 1 || args.length > 2) fail('a log line is "log <vkey> [<url>]"');
        const k = key(args[0]!, 'log');
        if (k.type !== ED25519 || k.publicKey.length !== 32) fail('a log key must be an Ed25519 note key (signature type 0x01)');
        if (logs.some((l) => equalBytes(l.vkey.publicKey, k.publicKey))) fail('a log with this public key is already listed');
        logs.push({ vkey: { name: k.name, id: k.id, publicKey: k.publicKey }, url: args[1] ?? null });
        return;
      }
      case 'witness': {
        if (args.length < 2 || args.length > 3) fail('a witness line is "witness <name> <vkey> [<url>]"');
        const [name, vkeyText, url] = args as [string, string, string | undefined];
        defined(name, 'witness');
        const k = key(vkeyText, `witness ${name}`);
        if (k.type === COSIGNATURE_ML_DSA_44)
          fail(`witness ${name} has an ML-DSA-44 key (type 0x06); this verifier checks Ed25519 cosignatures (type 0x04) only`);
        if (k.type !== COSIGNATURE_ED25519 || k.publicKey.length !== 32)
          fail(`witness ${name}: a witness key must be an Ed25519 cosignature key (signature type 0x04)`);
        if (witnesses.some((w) => equalBytes(w.vkey.publicKey, k.publicKey)))
          fail(`witness ${name}: a witness with this public key is already listed`);
        if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url))
          fail(`witness ${name}: the URL "${url}" is not an http(s) URL (the witness's submission prefix)`);
        witnesses.push({ name, vkey: { name: k.name, id: k.id, publicKey: k.publicKey }, url: url ?? null });
        names.set(name, { name, witness: true });
        return;
      }
      case 'group': {
        if (args.length < 3) fail('a group line is "group <name> <k>|any|all <member>..." with at least one member');
        const [name, threshold, ...memberNames] = args as [string, string, ...string[]];
        defined(name, 'group');
        const members = memberNames.map((m, j) => {
          if (m === 'none') fail(`group ${name}: "none" cannot be a group member`);
          if (memberNames.indexOf(m) !== j) fail(`group ${name}: "${m}" is listed twice`);
          const group = memberOf.get(m);
          if (group !== undefined)
            fail(`group ${name}: "${m}" is already a member of group ${group} (a name is a member of at most one group)`);
          return names.get(m) ?? fail(`group ${name}: "${m}" is not a witness or group defined on an earlier line`);
        });
        const k = threshold === 'any' ? 1 : threshold === 'all' ? members.length : /^[0-9]+$/.test(threshold) ? Number(threshold) : NaN;
        if (!(k >= 1 && k <= members.length))
          fail(
            `group ${name}: the threshold "${threshold}" must be any, all, or a decimal k with 1 <= k <= ${members.length} (its members)`,
          );
        for (const m of memberNames) memberOf.set(m, name);
        names.set(name, { name, witness: false, k, members });
        return;
      }
      case 'quorum': {
        if (args.length !== 1) fail('a quorum line is "quorum <name>" or "quorum none"');
        if (quorum !== undefined) fail('a second quorum line (a policy has exactly one)');
        quorum =
          args[0] === 'none'
            ? null
            : (names.get(args[0]!) ?? fail(`quorum "${args[0]}" is not a witness or group defined on an earlier line`));
        return;
      }
      default:
        fail(`unknown line "${keyword}" (a policy has log, witness, group and quorum lines, and # comments)`);
    }
  });
  if (quorum === undefined) throw new PolicyError(source, 0, 'no quorum line (a policy has exactly one: "quorum <name>" or "quorum none")');
  return { logs, witnesses, quorum };
}

/** Whether the witnesses named (policy names) meet the quorum rule; `quorum none` (null) always is. */
export function quorumMet(rule: QuorumRule | null, cosigned: ReadonlySet<string>): boolean {
  if (rule === null) return true;
  if (rule.witness) return cosigned.has(rule.name);
  return rule.members.filter((m) => quorumMet(m, cosigned)).length >= rule.k;
}
