/**
 * The checks of refusals.json (written by refusals.gen.ts beside this file): the genuine proofs as
 * controls, each forged one with the verdict a verifier must give, and the options that are misuse.
 * Inputs are named (proofs, policies, checkpoints), as the vector file holds them.
 */

/** The checks, for a clock `NOW` (ms), the log's origin and verifier key, and the older build's id (logged before the genuine one). */
export function refusalChecks(NOW: number, origin: string, logVkey: string, olderBuild: string): Record<string, unknown>[] {
  const checks: Record<string, unknown>[] = [];
  const policy = 'two of three';
  // Controls: the genuine proofs hold, with the log key, with the policy's log line alone, or both.
  for (const log of [true, false]) {
    checks.push({
      name: `record: genuine${log ? ', with the log key' : ', the policy alone'}`,
      call: 'verifyLogProof',
      proof: 'genuine',
      policy,
      log,
      valid: true,
    });
    checks.push({
      name: `absence: genuine${log ? ', with the log key' : ', the policy alone'}`,
      call: 'verifyAbsence',
      proof: 'genuine',
      policy,
      log,
      valid: true,
    });
  }
  checks.push({
    name: 'checkpoint: 100 signature lines are allowed',
    call: 'verifyWitnessedCheckpoint',
    checkpoint: '100 signature lines',
    policy,
    valid: true,
  });
  // The forged cases: refused with a log key, and with a policy alone (a policy implies the log check).
  for (const log of [true, false]) {
    const how = log ? 'with the log key' : 'the policy alone';
    for (const [proof, code] of [
      ['the genuine checkpoint, the index of another entry', 'NOT_INCLUDED'],
      ['the genuine checkpoint, a path with one bit flipped', 'NOT_INCLUDED'],
      ['a checkpoint of another origin', log ? 'CHECKPOINT_NOT_SIGNED' : 'LOG_ORIGIN_MISMATCH'],
      ['a checkpoint of 101 signature lines', 'CHECKPOINT_NOT_SIGNED'],
    ])
      checks.push({ name: `record: ${proof}, ${how}`, call: 'verifyLogProof', proof, policy, log, valid: false, code });
    for (const proof of [
      'a forked build, the genuine checkpoint with the logged statement index and path',
      'a forked build, the genuine checkpoint with another index and its path',
      'the genuine build, a path with one bit flipped',
      'the genuine build, a checkpoint of another origin',
      'the genuine build, no statement_proof',
    ])
      checks.push({
        name: `absence: ${proof}, ${how}`,
        call: 'verifyAbsence',
        proof,
        policy,
        log,
        valid: false,
        code: 'STATEMENT_NOT_LOGGED',
      });
    // Newest means last: a rolled-back store's proof, of a build logged before the live one, against the newest checkpoint.
    const rolledBack = 'a rolled-back build, logged before the live one, against the genuine checkpoint';
    checks.push(
      {
        name: `absence: ${rolledBack}, ${how}`,
        call: 'verifyAbsence',
        proof: rolledBack,
        policy,
        log,
        valid: false,
        code: 'BUILD_SUPERSEDED',
      },
      {
        name: `absence: ${rolledBack}, asked as that kept build (asOfBuild), ${how}`,
        call: 'verifyAbsence',
        proof: rolledBack,
        policy,
        log,
        options: { asOfBuild: olderBuild },
        valid: true,
      },
      {
        name: `absence: ${rolledBack}, asked as another kept build (asOfBuild), ${how}`,
        call: 'verifyAbsence',
        proof: rolledBack,
        policy,
        log,
        options: { asOfBuild: '20260920T120000Z-0b0b0b0b0b0b' },
        valid: false,
        code: 'BUILD_SUPERSEDED',
      },
    );
  }
  checks.push({
    name: 'absence: verifyAnswer, a rolled-back build, the log key without a policy',
    call: 'verifyAnswer',
    proof: 'a rolled-back build, logged before the live one, against the genuine checkpoint',
    log: true,
    valid: false,
    code: 'BUILD_SUPERSEDED',
  });
  checks.push(
    {
      name: 'record: a policy without a log line, no log key',
      call: 'verifyLogProof',
      proof: 'genuine',
      policy: 'no log line',
      log: false,
      valid: false,
      code: 'LOG_KEY_MISSING',
    },
    { name: 'record: no log key, no policy', call: 'verifyLogProof', proof: 'genuine', log: false, valid: false, code: 'LOG_KEY_MISSING' },
    {
      name: 'absence: a policy without a log line, no log key',
      call: 'verifyAbsence',
      proof: 'genuine',
      policy: 'no log line',
      log: false,
      valid: false,
      code: 'LOG_KEY_MISSING',
    },
    {
      name: 'absence: verifyAnswer, a policy without a log line, no log key',
      call: 'verifyAnswer',
      proof: 'genuine',
      policy: 'no log line',
      log: false,
      valid: false,
      code: 'LOG_KEY_MISSING',
    },
    {
      name: 'absence: verifyAnswer, a forked build, the policy alone',
      call: 'verifyAnswer',
      proof: 'a forked build, the genuine checkpoint with the logged statement index and path',
      policy,
      log: false,
      valid: false,
      code: 'STATEMENT_NOT_LOGGED',
    },
    {
      name: 'checkpoint: 101 signature lines',
      call: 'verifyWitnessedCheckpoint',
      checkpoint: '101 signature lines',
      policy,
      valid: false,
      code: 'CHECKPOINT_NOT_SIGNED',
    },
    { name: 'policy: a name in two groups', call: 'parsePolicy', policy: 'a name in two groups', throws: 'INVALID_POLICY', line: 6 },
  );
  // Misuse: thrown, coded, never a pass. Each against the genuine record proof and policy, with cosignatures a month old where an age matters.
  const MONTH = 30 * 86_400_000;
  const misuse = (name: string, options: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    checks.push({
      name: `misuse: ${name}`,
      call: 'verifyLogProof',
      proof: 'genuine',
      policy,
      log: true,
      options,
      throws: 'INVALID_ARGUMENT',
      ...extra,
    });
  misuse('maxAgeMs NaN, a month after the cosignatures', { maxAgeMs: { $: 'NaN' }, now: NOW + MONTH });
  misuse("maxAgeMs '36h'", { maxAgeMs: '36h', now: NOW + MONTH });
  misuse('maxAgeMs -1', { maxAgeMs: -1 });
  misuse('maxAgeMs 0', { maxAgeMs: 0 });
  misuse('maxAgeMs Infinity', { maxAgeMs: { $: 'Infinity' } });
  misuse('now an invalid Date', { now: { $: 'invalid Date' } });
  misuse('now NaN', { now: { $: 'NaN' } });
  misuse('now a date string', { now: '2026-11-28T00:00:00Z' });
  misuse('maxAgeMs without a policy', { maxAgeMs: 3_600_000 }, { policy: null });
  misuse('a policy as text, not parsed', { policy: 'quorum none\n' });
  misuse('absence: log without vkey', {}, { call: 'verifyAbsence', log: { origin } });
  misuse('answer: log without vkey', {}, { call: 'verifyAnswer', log: { proof: 'genuine' } });
  misuse('answer: log with a proof that is not text', {}, { call: 'verifyAnswer', log: { vkey: logVkey, proof: 5 } });
  misuse('absence: asOfBuild not a build id', { asOfBuild: true }, { call: 'verifyAbsence' });
  checks.push({
    name: 'misuse: now a valid Date is a time (accepted)',
    call: 'verifyLogProof',
    proof: 'genuine',
    policy,
    log: true,
    options: { now: { $: 'Date', iso: new Date(NOW).toISOString() } },
    valid: true,
  });

  return checks;
}
