// The floor of the gateway's design: a bare h3 app on listhen's server stack (node:http) that
// answers every request with one record's bytes and the same headers, with no checks at all.
// The benchmark runs it beside the gateway so the cost of the checks can be read off.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createApp, defineEventHandler, toNodeListener } from 'h3';

const [port, file] = [Number(process.argv[2]), process.argv[3]];
const body = readFileSync(file);
const app = createApp();
app.use(
  defineEventHandler((event) => {
    event.node.res.writeHead(200, ['content-type', 'application/json', 'cache-control', 'public, max-age=60, s-maxage=300', 'vary', 'Authorization', 'content-length', String(body.length)]);
    event.node.res.end(body);
  }),
);
createServer(toNodeListener(app)).listen(port, '127.0.0.1');
