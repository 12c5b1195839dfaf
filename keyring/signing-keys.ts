import { mkdir, open, readdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type KeyEndorsement, type PublicJwk, parseKeySet } from '@merchant-verify/verifier';
import { formatTimestamp, keySetEndorsements } from '#shared';
import { generatePrivateJwk, loadSigningKey, type SigningKey, toPublicJwk } from '../core/crypto/signing.ts';
import { ConfigError, InvalidKeyError } from '../core/errors/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { endorseKey, type PublishedKeySet, withEndorsements } from '../core/rules/key-endorsement.ts';

/**
 * The signing keys on disk:
 *   keys/signing/<kid>.jwk.json   private JWK, mode 0600: published while it is here
 *   keys/active                   the kid that signs the next build
 *   keys/retired/<kid>.jwk.json   no longer published
 */
const SIGNING = 'signing';
const RETIRED = 'retired';
const ACTIVE = 'active';

/**
 * Creates a new signing key (0600), makes it active, and returns its kid. Older keys stay published.
 * The new public key is endorsed by `endorser` (by default the active key of `keysDir`, if any),
 * and the endorsement is stored in the new key's file with the endorser's own chain, so the chain
 * from the first key travels with the active key (in `MVR_SIGNING_KEY` too) and a gateway that
 * trusts any earlier key trusts the new one. Without an endorser the key is trusted only where it
 * is pinned.
 */
export async function keygen(keysDir: string, endorser?: SigningKey | null, now: () => number = Date.now): Promise<string> {
  return (await keygenEndorsed(keysDir, endorser, now)).kid;
}

/** {@link keygen}, also saying which key endorsed the new one (null: none, it must be pinned). */
export async function keygenEndorsed(
  keysDir: string,
  endorser?: SigningKey | null,
  now: () => number = Date.now,
): Promise<{ kid: string; endorsedBy: string | null }> {
  const by = endorser === undefined ? await loadActiveKey(keysDir, undefined) : endorser;
  const jwk = generatePrivateJwk();
  const chain = by ? [endorseKey(toPublicJwk(jwk.x), by, formatTimestamp(now())), ...(by.endorsements ?? [])] : [];
  await mkdir(join(keysDir, SIGNING), { recursive: true, mode: 0o700 });
  // 'wx' + mode: the file is created 0600 from its first byte, never world-readable for a moment.
  const fh = await open(join(keysDir, SIGNING, `${jwk.kid}.jwk.json`), 'wx', 0o600);
  try {
    await fh.writeFile(`${JSON.stringify(chain.length > 0 ? { ...jwk, endorsements: chain } : jwk, null, 2)}\n`);
  } finally {
    await fh.close();
  }
  await writeAtomic(join(keysDir, ACTIVE), `${jwk.kid}\n`);
  return { kid: jwk.kid, endorsedBy: by?.kid ?? null };
}

/** Moves a key out of publication. The active key cannot be retired: rotate first. */
export async function retireKey(keysDir: string, kid: string): Promise<void> {
  if ((await activeKid(keysDir)) === kid) throw new ConfigError(`key ${kid} is active; run "mvr keygen" to rotate before retiring it`);
  await mkdir(join(keysDir, RETIRED), { recursive: true, mode: 0o700 });
  try {
    await rename(join(keysDir, SIGNING, `${kid}.jwk.json`), join(keysDir, RETIRED, `${kid}.jwk.json`));
  } catch {
    throw new ConfigError(`no published key ${kid} under ${join(keysDir, SIGNING)}`);
  }
}

/** The kid in `keys/active`, or null. */
export async function activeKid(keysDir: string): Promise<string | null> {
  try {
    return (await readFile(join(keysDir, ACTIVE), 'utf8')).trim() || null;
  } catch {
    return null;
  }
}

/** Keys listed under keys/signing with their kid and whether active. */
export async function listKeys(keysDir: string): Promise<{ kid: string; active: boolean; retired: boolean }[]> {
  const active = await activeKid(keysDir);
  const out: { kid: string; active: boolean; retired: boolean }[] = [];
  for (const [dir, retired] of [
    [SIGNING, false],
    [RETIRED, true],
  ] as const) {
    for (const name of await listJwkFiles(join(keysDir, dir))) {
      const kid = name.replace(/\.jwk\.json$/, '');
      out.push({ kid, active: kid === active, retired });
    }
  }
  return out;
}

/**
 * The key that signs this build: `MVR_SIGNING_KEY` (a private JWK, for CI secrets) wins over
 * `keys/active`. Null when neither is configured: the build is then unsigned.
 */
export async function loadActiveKey(keysDir: string, envKey: string | undefined): Promise<SigningKey | null> {
  if (envKey && envKey.trim() !== '') {
    try {
      return loadSigningKey(envKey);
    } catch (error) {
      throw new InvalidKeyError(`MVR_SIGNING_KEY: ${(error as Error).message}`);
    }
  }
  const kid = await activeKid(keysDir);
  if (!kid) return null;
  const file = join(keysDir, SIGNING, `${kid}.jwk.json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new InvalidKeyError(`${join(keysDir, ACTIVE)} names key ${kid}, but ${file} cannot be read`);
  }
  await warnIfReadableByOthers(file);
  try {
    return loadSigningKey(text);
  } catch (error) {
    throw new InvalidKeyError(`${file}: ${(error as Error).message}`);
  }
}

/**
 * The key set to publish: the active key first, then every other key under keys/signing, then
 * the public keys of `extraKeySetFile` (for CI, which holds only the active private key but must
 * keep earlier keys listed). Never a private member: only `toPublicJwk` output goes in.
 */
export async function publishedKeySet(keysDir: string, active: SigningKey | null, extraKeySetFile?: string): Promise<PublishedKeySet> {
  const keys = new Map<string, PublicJwk>();
  if (active) keys.set(active.kid, active.publicJwk);
  const others: PublicJwk[] = [];
  // The endorsements of every published key (each key's file holds its chain) and the ones carried over.
  const endorsements: KeyEndorsement[][] = [active?.endorsements ?? []];
  for (const name of await listJwkFiles(join(keysDir, SIGNING))) {
    const file = join(keysDir, SIGNING, name);
    try {
      const key = loadSigningKey(await readFile(file, 'utf8'));
      others.push(key.publicJwk);
      endorsements.push(key.endorsements ?? []);
    } catch (error) {
      throw new InvalidKeyError(`${file}: ${(error as Error).message}`);
    }
  }
  if (extraKeySetFile) {
    try {
      const raw: unknown = JSON.parse(await readFile(extraKeySetFile, 'utf8'));
      others.push(...parseKeySet(raw).keys);
      endorsements.push(keySetEndorsements(raw) as KeyEndorsement[]);
    } catch (error) {
      throw new ConfigError(`--publish-keys ${extraKeySetFile}: ${(error as Error).message}`);
    }
  }
  for (const k of others.sort((a, b) => a.kid.localeCompare(b.kid))) if (!keys.has(k.kid)) keys.set(k.kid, k);
  return withEndorsements({ keys: [...keys.values()] }, endorsements);
}

async function listJwkFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => n.endsWith('.jwk.json')).sort();
  } catch {
    return [];
  }
}

async function warnIfReadableByOthers(file: string): Promise<void> {
  const { mode } = await stat(file);
  if (mode & 0o077) process.emitWarning(`${file} is readable by group or others (mode ${(mode & 0o777).toString(8)}); run chmod 600`);
}
