import { mkdir, open, readdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type KeySet, type PublicJwk, parseKeySet } from '@merchant-verify/verifier';
import { ConfigError, InvalidKeyError } from '../core/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { generatePrivateJwk, loadSigningKey, type SigningKey } from '../core/signing.ts';

/**
 * The signing keys on disk:
 *   keys/signing/<kid>.jwk.json   private JWK, mode 0600: published while it is here
 *   keys/active                   the kid that signs the next build
 *   keys/retired/<kid>.jwk.json   no longer published
 */
const SIGNING = 'signing';
const RETIRED = 'retired';
const ACTIVE = 'active';

/** Creates a new signing key (0600), makes it active, and returns its kid. Older keys stay published. */
export async function keygen(keysDir: string): Promise<string> {
  const jwk = generatePrivateJwk();
  await mkdir(join(keysDir, SIGNING), { recursive: true, mode: 0o700 });
  // 'wx' + mode: the file is created 0600 from its first byte, never world-readable for a moment.
  const fh = await open(join(keysDir, SIGNING, `${jwk.kid}.jwk.json`), 'wx', 0o600);
  try {
    await fh.writeFile(`${JSON.stringify(jwk, null, 2)}\n`);
  } finally {
    await fh.close();
  }
  await writeAtomic(join(keysDir, ACTIVE), `${jwk.kid}\n`);
  return jwk.kid;
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
export async function publishedKeySet(keysDir: string, active: SigningKey | null, extraKeySetFile?: string): Promise<KeySet> {
  const keys = new Map<string, PublicJwk>();
  if (active) keys.set(active.kid, active.publicJwk);
  const others: PublicJwk[] = [];
  for (const name of await listJwkFiles(join(keysDir, SIGNING))) {
    const file = join(keysDir, SIGNING, name);
    try {
      others.push(loadSigningKey(await readFile(file, 'utf8')).publicJwk);
    } catch (error) {
      throw new InvalidKeyError(`${file}: ${(error as Error).message}`);
    }
  }
  if (extraKeySetFile) {
    let parsed: KeySet;
    try {
      parsed = parseKeySet(JSON.parse(await readFile(extraKeySetFile, 'utf8')));
    } catch (error) {
      throw new ConfigError(`--publish-keys ${extraKeySetFile}: ${(error as Error).message}`);
    }
    others.push(...parsed.keys);
  }
  for (const k of others.sort((a, b) => a.kid.localeCompare(b.kid))) if (!keys.has(k.kid)) keys.set(k.kid, k);
  return { keys: [...keys.values()] };
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
