// The floor of an h3 1.x app on node:http: the bare node:http floor (node-floor.mjs) with h3's
// app, router and send in between, answering one record's bytes with the same headers and no
// checks. What the gateway costs beyond it is its own work.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createApp, createRouter, defineEventHandler, send, toNodeListener } from 'h3';

const [port, file] = [Number(process.argv[2]), process.argv[3]];
const body = readFileSync(file);
const app = createApp();
const router = createRouter();
router.get(
  '/v1/verify',
  defineEventHandler((event) => {
    const res = event.node.res;
    res.setHeader('content-type', 'application/json');
    res.setHeader('cache-control', 'public, max-age=60, s-maxage=300');
    res.setHeader('vary', 'Authorization');
    res.setHeader('content-length', body.length);
    return send(event, body);
  }),
);
app.use(router);
createServer(toNodeListener(app)).listen(port, '127.0.0.1');
