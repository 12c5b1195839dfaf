// The floor of any Node.js server on this machine: a bare node:http server that answers every
// request with one record's bytes and the gateway's headers (the same names, order and value
// lengths: floor-headers.mjs, so the same bytes on the wire), written on the next turn (as the gateway
// wrote until decision 0052; kept so that figures compare across runs), with no checks at all. The benchmark runs it beside the gateway so the cost of the
// checks can be read off, and so can the distance from nginx that Node.js itself accounts for.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { gatewayHeaders } from './floor-headers.mjs';

const [port, file] = [Number(process.argv[2]), process.argv[3]];
const body = readFileSync(file);
const headers = gatewayHeaders(body);
createServer((_req, res) => {
  setImmediate(() => {
    res.writeHead(200, headers);
    res.end(body);
  });
}).listen(port, '127.0.0.1');
