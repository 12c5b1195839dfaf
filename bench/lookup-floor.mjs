// The floor of a server that does the least a key-gated lookup must: a bare node:http server that
// finds the Bearer key in a table of accepted keys (401 when absent) and the `domain` asked for in
// a table of records held in memory, then answers that record's bytes with the gateway's headers (the same names,
// order and value lengths: floor-headers.mjs, so the same bytes on the wire),
// in the same turn (as the gateway answers a record in memory). No other check, no log, no
// metrics. Beside the rotating hot set, it tells what a gateway costs beyond finding a key and a
// record, where node-floor.mjs answers one record's bytes to every request without looking.
//
// argv: port, a file of lines `domain<TAB>record file`, the one accepted Bearer key.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { gatewayHeaders } from './floor-headers.mjs';

const [port, list, key] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
const records = new Map();
for (const line of readFileSync(list, 'utf8').split('\n')) {
  const tab = line.indexOf('\t');
  if (tab > 0) records.set(line.slice(0, tab), readFileSync(line.slice(tab + 1)));
}
const keys = new Map([[`Bearer ${key}`, 'bench']]);
const answers = new Map([...records].map(([domain, body]) => [domain, { body, headers: gatewayHeaders(body) }]));
const refused = Buffer.from('{"code":"UNAUTHORIZED"}');
const missing = Buffer.from('{"code":"NOT_FOUND"}');

createServer((req, res) => {
  if (!keys.has(req.headers.authorization)) {
    res.writeHead(401, ['content-type', 'application/problem+json', 'content-length', String(refused.length)]);
    res.end(refused);
    return;
  }
  const url = req.url ?? '';
  const at = url.indexOf('domain=');
  const end = url.indexOf('&', at);
  const answer = at < 0 ? undefined : answers.get(url.slice(at + 7, end < 0 ? undefined : end));
  if (!answer) {
    res.writeHead(404, ['content-type', 'application/problem+json', 'content-length', String(missing.length)]);
    res.end(missing);
    return;
  }
  res.writeHead(200, answer.headers);
  res.end(answer.body);
}).listen(port, '127.0.0.1');
