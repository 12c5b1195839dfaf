// The floor of an h3 1.x app on node:http: the bare node:http floor (node-floor.mjs) with h3's
// app, router and send in between, answering one record's bytes with the gateway's headers (the same
// names, order and value lengths: floor-headers.mjs, so the same bytes on the wire), set one by
// one as h3 apps do, and no checks. What the gateway costs beyond it is its own work.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createApp, createRouter, defineEventHandler, send, toNodeListener } from 'h3';
import { gatewayHeaders } from './floor-headers.mjs';

const [port, file] = [Number(process.argv[2]), process.argv[3]];
const body = readFileSync(file);
const headers = gatewayHeaders(body);
const contentLength = headers.indexOf('content-length');
const app = createApp();
const router = createRouter();
router.get(
  '/v1/verify',
  defineEventHandler((event) => {
    const res = event.node.res;
    for (let i = 0; i < contentLength; i += 2) res.setHeader(headers[i], headers[i + 1]);
    res.setHeader('content-length', body.length);
    return send(event, body);
  }),
);
app.use(router);
createServer(toNodeListener(app)).listen(port, '127.0.0.1');
