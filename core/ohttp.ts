import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import { OhttpKeyConfigError } from './errors/errors.ts';

/*
 * Oblivious HTTP (RFC 9458) with one suite: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM,
 * the suite RFC 9458's own example uses and every relay and client library supports. HPKE itself
 * is @hpke/core's; this module adds only what RFC 9458 puts around it (the key configuration's
 * bytes, the header, the response's key schedule). The gateway and the client share it, so both
 * read one definition of the wire format.
 */

/** The media types of RFC 9458 and RFC 9540. */
export const OHTTP_MEDIA = {
  request: 'message/ohttp-req',
  response: 'message/ohttp-res',
  keys: 'application/ohttp-keys',
} as const;

/** Where a gateway publishes its key configuration and takes encapsulated requests (RFC 9540 section 3). */
export const OHTTP_GATEWAY_PATH = '/.well-known/ohttp-gateway';

const KEM_ID = 0x0020;
const KDF_ID = 0x0001;
const AEAD_ID = 0x0001;
const PUBLIC_KEY_BYTES = 32;
const ENC_BYTES = 32;
const AEAD_KEY_BYTES = 16;
const AEAD_NONCE_BYTES = 12;
const TAG_BYTES = 16;
// max(Nn, Nk) (RFC 9458 section 4.4).
const RESPONSE_NONCE_BYTES = Math.max(AEAD_KEY_BYTES, AEAD_NONCE_BYTES);
const REQUEST_LABEL = 'message/bhttp request';
const RESPONSE_LABEL = 'message/bhttp response';

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });

/** One key configuration (RFC 9458 section 3.1) of the single suite above. */
export interface OhttpKeyConfig {
  keyId: number;
  publicKey: Uint8Array;
}

/** A gateway's key: its configuration and its HPKE private key. */
export interface OhttpGatewayKey {
  config: OhttpKeyConfig;
  /** `application/ohttp-keys`: the configuration as published and as its hash is signed. */
  configBytes: Buffer;
  privateKey: CryptoKey;
}

/**
 * The gateway's key from its 32-byte seed (HPKE DeriveKeyPair), so the key file holds only the
 * seed and the public configuration always follows from it.
 */
export async function ohttpKeyFromSeed(keyId: number, seed: Uint8Array): Promise<OhttpGatewayKey> {
  const pair = await suite.kem.deriveKeyPair(seed);
  const publicKey = new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey));
  const config = { keyId, publicKey };
  return { config, configBytes: encodeKeyConfigs([config]), privateKey: pair.privateKey };
}

/** `application/ohttp-keys` (RFC 9458 section 3.2): each configuration with its 2-byte length. */
export function encodeKeyConfigs(configs: readonly OhttpKeyConfig[]): Buffer {
  return Buffer.concat(
    configs.map((c) => {
      const one = Buffer.concat([Buffer.from([c.keyId, KEM_ID >> 8, KEM_ID & 0xff]), c.publicKey, u16(4), u16(KDF_ID), u16(AEAD_ID)]);
      return Buffer.concat([u16(one.length), one]);
    }),
  );
}

/** SHA-256 of the `application/ohttp-keys` bytes, in hex: what the build statement names. */
export function keyConfigSha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The first configuration of `application/ohttp-keys` this client can use (our suite); throws
 * OHTTP_KEY_CONFIG_INVALID when the bytes do not parse or none offers the suite.
 */
export function parseKeyConfigs(bytes: Uint8Array): OhttpKeyConfig {
  const b = Buffer.from(bytes);
  let at = 0;
  while (at < b.length) {
    if (at + 2 > b.length) throw new OhttpKeyConfigError('a key configuration is cut short');
    const length = b.readUInt16BE(at);
    const one = b.subarray(at + 2, at + 2 + length);
    if (one.length !== length || length < 7) throw new OhttpKeyConfigError('a key configuration is cut short');
    at += 2 + length;
    const kem = one.readUInt16BE(1);
    if (kem !== KEM_ID || length < 3 + PUBLIC_KEY_BYTES + 2) continue;
    const algorithms = one.subarray(3 + PUBLIC_KEY_BYTES + 2);
    if (algorithms.length !== one.readUInt16BE(3 + PUBLIC_KEY_BYTES) || algorithms.length % 4 !== 0)
      throw new OhttpKeyConfigError('a key configuration lists its algorithms wrongly');
    for (let i = 0; i < algorithms.length; i += 4) {
      if (algorithms.readUInt16BE(i) === KDF_ID && algorithms.readUInt16BE(i + 2) === AEAD_ID)
        return { keyId: one[0]!, publicKey: new Uint8Array(one.subarray(3, 3 + PUBLIC_KEY_BYTES)) };
    }
  }
  throw new OhttpKeyConfigError('no key configuration offers DHKEM(X25519, HKDF-SHA256), HKDF-SHA256 and AES-128-GCM');
}

/** What a client keeps of one encapsulated request to open its response with. */
export interface PendingResponse {
  open(encapsulated: Uint8Array): Uint8Array;
}

/** Encapsulates a Binary HTTP request to `config` (RFC 9458 section 4.3); returns its bytes and how to open the response. */
export async function encapsulateRequest(
  config: OhttpKeyConfig,
  request: Uint8Array,
): Promise<{ bytes: Buffer; response: PendingResponse }> {
  const header = requestHeader(config.keyId);
  const sender = await suite.createSenderContext({
    recipientPublicKey: await suite.kem.deserializePublicKey(config.publicKey),
    info: requestInfo(header),
  });
  const sealed = new Uint8Array(await sender.seal(request));
  const enc = new Uint8Array(sender.enc);
  const secret = new Uint8Array(await sender.export(Buffer.from(RESPONSE_LABEL), RESPONSE_NONCE_BYTES));
  return {
    bytes: Buffer.concat([header, enc, sealed]),
    response: { open: (encapsulated) => openResponse(secret, enc, encapsulated) },
  };
}

/** What a gateway learned from one encapsulated request: the Binary HTTP request, and how to seal its response. */
export interface OpenedRequest {
  request: Uint8Array;
  /** Seals the Binary HTTP response; `nonce` (random by default) is given only to check RFC 9458's example. */
  sealResponse(response: Uint8Array, nonce?: Uint8Array): Buffer;
}

/**
 * Decapsulates a request to `key` (RFC 9458 section 4.3). Returns null when the request is not
 * for this key (another key id or suite, RFC 9458's "key configuration problem") and throws when
 * it cannot be opened; the caller answers each with its code.
 */
export async function decapsulateRequest(key: OhttpGatewayKey, bytes: Uint8Array): Promise<OpenedRequest | null> {
  const b = Buffer.from(bytes);
  if (b.length < 7 + ENC_BYTES + TAG_BYTES) throw new RangeError('an encapsulated request is shorter than its header, key share and tag');
  const header = b.subarray(0, 7);
  if (!header.equals(requestHeader(key.config.keyId))) return null;
  const enc = new Uint8Array(b.subarray(7, 7 + ENC_BYTES));
  const recipient = await suite.createRecipientContext({ recipientKey: key.privateKey, enc, info: requestInfo(header) });
  const request = new Uint8Array(await recipient.open(new Uint8Array(b.subarray(7 + ENC_BYTES))));
  const secret = new Uint8Array(await recipient.export(Buffer.from(RESPONSE_LABEL), RESPONSE_NONCE_BYTES));
  return { request, sealResponse: (response, nonce) => sealResponse(secret, enc, response, nonce) };
}

function sealResponse(
  secret: Uint8Array,
  enc: Uint8Array,
  response: Uint8Array,
  nonce: Uint8Array = randomBytes(RESPONSE_NONCE_BYTES),
): Buffer {
  const { key, iv } = responseKeys(secret, enc, nonce);
  const cipher = createCipheriv('aes-128-gcm', key, iv);
  return Buffer.concat([nonce, cipher.update(response), cipher.final(), cipher.getAuthTag()]);
}

function openResponse(secret: Uint8Array, enc: Uint8Array, encapsulated: Uint8Array): Uint8Array {
  const b = Buffer.from(encapsulated);
  if (b.length < RESPONSE_NONCE_BYTES + TAG_BYTES) throw new RangeError('an encapsulated response is shorter than its nonce and tag');
  const { key, iv } = responseKeys(secret, enc, b.subarray(0, RESPONSE_NONCE_BYTES));
  const decipher = createDecipheriv('aes-128-gcm', key, iv);
  decipher.setAuthTag(b.subarray(b.length - TAG_BYTES));
  return Buffer.concat([decipher.update(b.subarray(RESPONSE_NONCE_BYTES, b.length - TAG_BYTES)), decipher.final()]);
}

/** RFC 9458 section 4.4: prk = Extract(enc || response_nonce, secret); key and nonce expanded from it. */
function responseKeys(secret: Uint8Array, enc: Uint8Array, nonce: Uint8Array): { key: Buffer; iv: Buffer } {
  const salt = Buffer.concat([enc, nonce]);
  return {
    key: Buffer.from(hkdfSync('sha256', secret, salt, 'key', AEAD_KEY_BYTES)),
    iv: Buffer.from(hkdfSync('sha256', secret, salt, 'nonce', AEAD_NONCE_BYTES)),
  };
}

function requestHeader(keyId: number): Buffer {
  return Buffer.concat([Buffer.from([keyId]), u16(KEM_ID), u16(KDF_ID), u16(AEAD_ID)]);
}

function requestInfo(header: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(REQUEST_LABEL), Buffer.from([0]), header]);
}

function u16(n: number): Buffer {
  return Buffer.from([n >> 8, n & 0xff]);
}
