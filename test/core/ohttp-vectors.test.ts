/**
 * The Oblivious HTTP wire format against the published examples, not only against itself: RFC
 * 9458 Appendix A (the key configuration, the encapsulated request opened with the example's
 * private key, the response sealed with the example's nonce) and the Binary HTTP library read
 * against RFC 9292's known-length request (section 5.1) and RFC 9458's inner messages.
 */
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import { BHttpDecoder, BHttpEncoder } from 'bhttp-js';
import { describe, expect, it } from 'vitest';
import { decapsulateRequest, encapsulateRequest, parseKeyConfigs } from '../../core/ohttp.ts';

const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

// RFC 9458 Appendix A: a public example, not a live key.
const A = {
  privateKey: '3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a',
  publicKey: '31e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e798155',
  keyConfig: '01002031e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e79815500080001000100010003',
  request: '00034745540568747470730b6578616d706c652e636f6d012f',
  encapsulatedRequest:
    '010020000100014b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad19dec96c208b4726374e469135906992e1268c594d2a10c695d858c40a026e7965e7d86b83dd440b2c0185204b4d63525',
  response: '0140c8',
  responseNonce: 'c789e7151fcba46158ca84b04464910d',
  encapsulatedResponse: 'c789e7151fcba46158ca84b04464910d86f9013e404feea014e7be4a441f234f857fbd',
};

// RFC 9292 section 5.1: a known-length GET of https://www.example.com/hello.txt (no authority: a Host field).
const RFC9292_REQUEST =
  '0003474554056874747073000a2f68656c6c6f2e747874406c0a757365722d6167656e74346375726c2f372e31362e33206c69626375726c2f372e31362e33204f70656e53534c2f302e392e376c207a6c69622f312e322e3304686f73740f7777772e6578616d706c652e636f6d0f6163636570742d6c616e677561676506656e2c206d690000';

describe('Oblivious HTTP, RFC 9458 Appendix A', () => {
  it('reads the example key configuration (it offers AES-128-GCM beside ChaCha20-Poly1305)', () => {
    const config = parseKeyConfigs(new Uint8Array(Buffer.concat([Buffer.from([0, 0x2d]), hex(A.keyConfig)])));
    expect(config.keyId).toBe(1);
    expect(Buffer.from(config.publicKey).toString('hex')).toBe(A.publicKey);
  });

  it('opens the example request with its private key, and seals the example response byte for byte', async () => {
    const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
    const configBytes = Buffer.concat([Buffer.from([0, 0x2d]), hex(A.keyConfig)]);
    const key = {
      config: parseKeyConfigs(configBytes),
      configBytes,
      privateKey: await suite.kem.importKey('raw', hex(A.privateKey).buffer, false),
    };
    const opened = await decapsulateRequest(key, hex(A.encapsulatedRequest));
    expect(Buffer.from(opened!.request).toString('hex')).toBe(A.request);
    expect(opened!.sealResponse(hex(A.response), hex(A.responseNonce)).toString('hex')).toBe(A.encapsulatedResponse);
  });

  it('a request sealed by this client opens at the gateway, and its answer opens at the client', async () => {
    const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
    const configBytes = Buffer.concat([Buffer.from([0, 0x2d]), hex(A.keyConfig)]);
    const key = {
      config: parseKeyConfigs(configBytes),
      configBytes,
      privateKey: await suite.kem.importKey('raw', hex(A.privateKey).buffer, false),
    };
    const sealed = await encapsulateRequest(key.config, hex(A.request));
    const opened = await decapsulateRequest(key, sealed.bytes);
    expect(Buffer.from(opened!.request).toString('hex')).toBe(A.request);
    expect(Buffer.from(sealed.response.open(opened!.sealResponse(hex(A.response)))).toString('hex')).toBe(A.response);
  });
});

describe('Binary HTTP (bhttp-js), RFC 9292', () => {
  it("reads RFC 9292's known-length request and RFC 9458's inner request and response", async () => {
    const decoder = new BHttpDecoder();
    const request = decoder.decodeRequest(hex(RFC9292_REQUEST));
    expect(request.method).toBe('GET');
    expect(new URL(request.url).pathname).toBe('/hello.txt');
    expect(request.headers.get('accept-language')).toBe('en, mi');
    const inner = decoder.decodeRequest(hex(A.request));
    expect([inner.method, inner.url]).toEqual(['GET', 'https://example.com/']);
    expect(decoder.decodeResponse(hex(A.response)).status).toBe(200);
  });

  it("writes RFC 9458's inner request and response as the RFC does, with the empty sections the RFC's example leaves out", async () => {
    // RFC 9292 section 3.8 lets a message end before empty field sections and content; the
    // library writes each as a zero length instead (three 00 bytes), which reads the same.
    const encoder = new BHttpEncoder();
    expect(Buffer.from(await encoder.encodeRequest(new Request('https://example.com/'))).toString('hex')).toBe(`${A.request}000000`);
    expect(Buffer.from(await encoder.encodeResponse(new Response(null, { status: 200 }))).toString('hex')).toBe(`${A.response}000000`);
  });
});
