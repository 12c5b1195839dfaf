/**
 * A local S3-compatible server that checks AWS Signature V4: s3rver stores the objects, and a
 * proxy in front of it refuses every request that is unsigned, signed with another secret, or
 * whose payload does not match its signed hash. The signature is recomputed with AWS's own
 * signer (@smithy/signature-v4), not the library the service signs with. `stop()` and `start()`
 * take the endpoint away and bring it back on the same port. A range of an empty object is
 * answered 416, as S3 does (s3rver itself hangs on it). More key pairs may be accepted (role
 * credentials, each with its session token, which must then be sent and signed); `signedWith`
 * lists the access key of every request accepted, in order. Uploads in parts work as s3rver has
 * them (it takes parts of any size, where S3 wants 5 MiB but the last), and an abort of one
 * (AbortMultipartUpload, which s3rver lacks) is answered here, its parts removed. `failing` makes
 * the server answer 503 to the requests it picks (a bucket failing mid-publish).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import S3rver from 's3rver';
import { freePort } from './ports.ts';

export const S3_ACCESS_KEY = 'MVRTESTACCESSKEY';
export const S3_SECRET_KEY = 'mvr-test-secret-access-key-0123456789';
export const S3_REGION = 'us-east-1';

/** A key pair the server accepts; with a token, only requests that send and sign that token. */
export interface TestS3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface TestS3 {
  endpoint: string;
  /** Where s3rver keeps the objects (and the parts of uploads not completed yet). */
  directory: string;
  /** The access key of every accepted request, in order. */
  signedWith: string[];
  /** Every accepted request as `METHOD /bucket/key`, in order (the reads a test counts); a step of an upload in parts adds its query (`?uploads`, `?partNumber=2&uploadId`, `?uploadId`). */
  requests: string[];
  /** Bytes of every answer's body sent so far, in all (what a benchmark counts a lookup by). */
  bytesOut: number;
  /** The standard AWS variables for this server. */
  env: Record<string, string>;
  /** Requests refused for their signature (for tests that check the check). */
  refused: number;
  /** When set, every request it returns true for (signature checked first) is answered 503, and not counted in `requests`. */
  failing: ((request: { method: string; path: string; query: URLSearchParams }) => boolean) | null;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the server with `buckets` on 127.0.0.1. By default on a free port, its objects in a
 * temporary folder `close()` removes; `directory` keeps them in a folder of one's own (kept on
 * close, so `npm run s3:local` serves yesterday's bucket again) and `port` fixes the port.
 */
export async function startS3(
  buckets: string[],
  opts: { credentials?: TestS3Credentials[]; directory?: string; port?: number } = {},
): Promise<TestS3> {
  const directory = opts.directory ?? mkdtempSync(join(tmpdir(), 'mvr-s3-'));
  const backend = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const { port: backendPort } = (await backend.run()) as { port: number };
  const port = opts.port ?? (await freePort());
  const accepted = opts.credentials ?? [{ accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY }];
  const signers = new Map(
    accepted.map((c) => [
      c.accessKeyId,
      {
        token: c.sessionToken,
        signer: new SignatureV4({
          credentials: c,
          region: S3_REGION,
          service: 's3',
          sha256: Hash.bind(null, 'sha256'),
          uriEscapePath: false,
        }),
      },
    ]),
  );
  const state: TestS3 = {
    endpoint: `http://127.0.0.1:${port}`,
    directory,
    signedWith: [],
    requests: [],
    bytesOut: 0,
    env: {
      AWS_ACCESS_KEY_ID: S3_ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: S3_SECRET_KEY,
      AWS_REGION: S3_REGION,
      AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
    },
    refused: 0,
    failing: null,
    stop: async () => undefined,
    start: async () => undefined,
    close: async () => undefined,
  };

  const check = async (req: IncomingMessage, body: Buffer): Promise<string | null> => {
    const auth = req.headers.authorization ?? '';
    const m =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!m) return 'AccessDenied: not signed with AWS Signature V4';
    const known = signers.get(m[1]!);
    if (!known) return 'InvalidAccessKeyId';
    const signedHeaders = m[4]!.split(';');
    if (
      known.token !== undefined &&
      (req.headers['x-amz-security-token'] !== known.token || !signedHeaders.includes('x-amz-security-token'))
    )
      return 'InvalidToken: the session token of this key was not sent and signed';
    const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
    if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== createHash('sha256').update(body).digest('hex'))
      return 'XAmzContentSHA256Mismatch';
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!date) return 'AccessDenied: no x-amz-date';
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) headers[name] = String(req.headers[name] ?? '');
    const signed = await known.signer.sign(
      {
        method: req.method ?? 'GET',
        protocol: 'http:',
        hostname: '127.0.0.1',
        port,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers,
        body,
      },
      { signingDate: new Date(Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!)) },
    );
    const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization))?.[1];
    if (expected !== m[5]) return 'SignatureDoesNotMatch';
    state.signedWith.push(m[1]!);
    return null;
  };

  /** Per object path, the request now being served (see below). */
  const objectTurns = new Map<string, Promise<void>>();
  const proxy = (): Server =>
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        void check(req, body).then((problem) => {
          if (problem) {
            state.refused++;
            res
              .writeHead(403, { 'content-type': 'application/xml' })
              .end(`<Error><Code>${problem.split(':')[0]}</Code><Message>${problem}</Message></Error>`);
            return;
          }
          const url = new URL(req.url ?? '/', 'http://placeholder');
          if (state.failing?.({ method: req.method ?? 'GET', path: decodeURIComponent(url.pathname), query: url.searchParams })) {
            res
              .writeHead(503, { 'content-type': 'application/xml' })
              .end('<Error><Code>SlowDown</Code><Message>failing, as the test asked</Message></Error>');
            return;
          }
          if (req.method === 'DELETE' && url.searchParams.has('uploadId')) {
            state.requests.push(`DELETE ${decodeURIComponent(url.pathname)}${queryNamed(url.searchParams)}`);
            const bucket = decodeURIComponent(url.pathname).split('/')[1]!;
            rmSync(join(directory, bucket, '._S3rver_uploads', url.searchParams.get('uploadId')!.replace(/[^0-9a-f]/g, '')), {
              recursive: true,
              force: true,
            });
            res.writeHead(204).end();
            return;
          }
          // Checked here: s3rver itself knows one fixed account and never checks V4 signatures.
          const { authorization: _checked, ...headers } = req.headers;
          // S3 replaces an object atomically: a reader gets the old bytes or the new. s3rver writes
          // the file in place, so a read racing a write got a torn object (a live.json that was
          // not JSON); requests for one object are taken one at a time here instead.
          const path = (req.url ?? '/').split('?', 1)[0]!;
          state.requests.push(`${req.method} ${decodeURIComponent(path)}${queryNamed(url.searchParams)}`);
          const previous = objectTurns.get(path) ?? Promise.resolve();
          let release!: () => void;
          const answered = new Promise<void>((resolve) => (release = resolve));
          const turn = previous.then(() => answered);
          objectTurns.set(path, turn);
          res.on('close', () => {
            release();
            if (objectTurns.get(path) === turn) objectTurns.delete(path);
          });
          void previous.then(() => {
            const upstream = request({ host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers }, (answer) => {
              // S3 answers a range of an empty object with 416 InvalidRange; s3rver promises one
              // byte it never sends (the client then waits for it), so answer as S3 does.
              if (answer.statusCode === 206 && /\/0$/.test(String(answer.headers['content-range']))) {
                answer.destroy();
                res
                  .writeHead(416, { 'content-type': 'application/xml', 'content-range': 'bytes */0' })
                  .end('<Error><Code>InvalidRange</Code><Message>The requested range is not satisfiable</Message></Error>');
                return;
              }
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.on('data', (chunk: Buffer) => (state.bytesOut += chunk.length));
              answer.pipe(res);
            });
            // An upstream failure mid-answer aborts the answer (the client sees it cut), as a network would.
            upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
            upstream.end(body);
          });
        });
      });
    });

  let server = proxy();
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen();
  state.stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  state.start = async () => {
    server = proxy();
    await listen();
  };
  state.close = async () => {
    await state.stop();
    await backend.close();
    if (opts.directory === undefined) rmSync(directory, { recursive: true, force: true });
  };
  return state;
}

/** A request's query for `requests`: its names, with a part's number (an upload id is random, so left out). */
const queryNamed = (query: URLSearchParams): string =>
  query.size === 0 ? '' : `?${[...query.keys()].map((k) => (k === 'partNumber' ? `${k}=${query.get(k)}` : k)).join('&')}`;
