// The floor of the gateway's fast lane: what Node.js itself costs per request when a request is
// read the way the lane reads it (Node's own HTTP parser, the `HTTPParser` of _http_common, on a
// plain socket) and answered the way the lane answers (one buffer, written on the next turn of the
// event loop with the other answers of that turn), with no checks and no work at all: every
// request gets one record's bytes behind the same headers. The benchmark runs it beside the
// gateway, so the cost of the gateway's own work (key, quota, domain, cache, answer) can be read
// off as the distance between the two, and the distance from nginx that Node.js accounts for as
// this floor's.
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const { HTTPParser } = createRequire(import.meta.url)('_http_common');
const [port, file] = [Number(process.argv[2]), process.argv[3]];
const body = readFileSync(file);
const head = (date) =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncache-control: public, max-age=60, s-maxage=300\r\nvary: Authorization\r\n` +
  `content-length: ${body.length}\r\nDate: ${date}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n`;
let answer = Buffer.concat([Buffer.from(head(new Date().toUTCString()), 'latin1'), body]);
setInterval(() => (answer = Buffer.concat([Buffer.from(head(new Date().toUTCString()), 'latin1'), body])), 1000).unref();

let queued = [];
const flush = () => {
  const sockets = queued;
  queued = [];
  for (const socket of sockets) if (!socket.destroyed) socket.write(answer);
};

createServer((socket) => {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.REQUEST, {}, 16 * 1024, 0);
  let complete = 0;
  parser[HTTPParser.kOnHeadersComplete] = () => 0;
  parser[HTTPParser.kOnMessageComplete] = () => {
    complete++;
  };
  socket.on('data', (chunk) => {
    complete = 0;
    if (parser.execute(chunk) instanceof Error) return socket.destroy();
    for (let i = 0; i < complete; i++) {
      if (queued.length === 0) setImmediate(flush);
      queued.push(socket);
    }
  });
  socket.on('error', () => socket.destroy());
  socket.on('close', () => parser.close());
}).listen(port, '127.0.0.1');
