/**
 * The package's exported constants and error classes, as a caller meets them: each class is an
 * MvrError with its own code, and the public function that refuses misuse throws it. The
 * functions themselves have test files of their own (verify-record, verify-answer, online...).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BUNDLE_SCHEMA_SUFFIX,
  CanonicalizationError,
  FetchFailedError,
  gatewaySource,
  InvalidArgumentError,
  InvalidKeySetError,
  InvalidVerifierKeyError,
  KEY_SET_PATH,
  LOG_KEY_PATH,
  MvrError,
  NoteError,
  PolicyError,
  parseKeySet,
  parsePolicy,
  VERIFIER_ERROR_CODES,
  verifyLogProof,
  verifyRecord,
} from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('the exported constants', () => {
  it('name the gateway paths a client fetches and the bundle schema suffix', () => {
    expect(KEY_SET_PATH).toBe('/.well-known/merchant-verify-keys.json');
    expect(LOG_KEY_PATH).toBe('/.well-known/merchant-verify-log.vkey');
    expect(BUNDLE_SCHEMA_SUFFIX).toBe('/schemas/bundle/v1');
  });
});

describe('the exported error classes', () => {
  const classes = [
    CanonicalizationError,
    InvalidKeySetError,
    PolicyError,
    InvalidArgumentError,
    NoteError,
    InvalidVerifierKeyError,
    FetchFailedError,
  ];

  it.each(classes)('%o is an MvrError whose code is one of VERIFIER_ERROR_CODES', (cls) => {
    expect(cls.prototype).toBeInstanceOf(MvrError);
    expect(VERIFIER_ERROR_CODES).toContain(cls.code);
  });

  it('a policy that cannot be read throws PolicyError', () => {
    const error = thrown(() => parsePolicy('not a policy line\n', 'witnesses.policy'));
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as MvrError).code).toBe('INVALID_POLICY');
  });

  it('a key set that is not one throws InvalidKeySetError', () => {
    const error = thrown(() => parseKeySet({ keys: 'none' }));
    expect(error).toBeInstanceOf(InvalidKeySetError);
    expect((error as MvrError).code).toBe('INVALID_KEY_SET');
  });

  it('options that are not options throw InvalidArgumentError', () => {
    const error = thrown(() => verifyRecord({}, { keys: [] }, { now: Number.NaN }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as MvrError).code).toBe('INVALID_ARGUMENT');
  });

  it('a log key that cannot be read throws InvalidVerifierKeyError, a NoteError', () => {
    const error = thrown(() => verifyLogProof({}, 'c2sp.org/tlog-proof@v1\n', { vkey: 'not a key' }));
    expect(error).toBeInstanceOf(InvalidVerifierKeyError);
    expect(error).toBeInstanceOf(NoteError);
    expect((error as MvrError).code).toBe('INVALID_VERIFIER_KEY');
  });

  it('a value canonical JSON cannot express is a CanonicalizationError', () => {
    const error = new CanonicalizationError('$.x', 'NaN is not JSON');
    expect(error.code).toBe('NOT_CANONICALIZABLE');
  });

  describe('a gateway that refuses', () => {
    const server = createServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'application/problem+json' }).end('{"code":"UNAVAILABLE"}');
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('makes gatewaySource throw FetchFailedError with the status', async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const source = gatewaySource({ baseUrl: `http://127.0.0.1:${port}` });
      const error = await source.keySet().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FetchFailedError);
      expect((error as FetchFailedError).status).toBe(503);
    });
  });
});
