/**
 * The log writer of `mvr serve` on its own, over a real file: lines are held and written in
 * batches (never one synchronous write per line), and close() writes every one, in order.
 */
import { openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessLine } from '../../gateway/context.ts';
import { accessLogLine, openJsonLog } from '../../gateway/json-log.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mvr-json-log-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('openJsonLog', () => {
  it('holds lines instead of writing each, and close() writes them all in order, as JSON with level, time and the members in order', async () => {
    const file = join(dir, 'few.log');
    const log = openJsonLog(openSync(file, 'w'));
    for (let i = 0; i < 5; i++) log.log({ level: i === 4 ? 'warn' : 'info', msg: 'request', n: i, path: '/v1/verify' });
    // Nothing is written while the lines are logged: no write per line, not even later in this turn.
    expect(readFileSync(file, 'utf8')).toBe('');
    await log.close();
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
    const lines = linesOf(file);
    expect(lines.map((l) => l.n)).toEqual([0, 1, 2, 3, 4]);
    expect(lines[4]).toEqual({
      level: 'warn',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      msg: 'request',
      n: 4,
      path: '/v1/verify',
    });
    expect(Object.keys(lines[0]!)).toEqual(['level', 'time', 'msg', 'n', 'path']);
  });

  it('loses no line of many logged at once', async () => {
    const file = join(dir, 'many.log');
    const log = openJsonLog(openSync(file, 'w'));
    for (let i = 0; i < 20_000; i++) log.log({ level: 'info', msg: 'request', n: i });
    await log.close();
    const ns = linesOf(file).map((l) => l.n);
    expect(ns).toHaveLength(20_000);
    expect(ns.every((n, i) => n === i)).toBe(true);
  });

  it('writes an access line as the same text that logging it as a line object writes, in the order logged', async () => {
    const file = join(dir, 'access.log');
    const log = openJsonLog(openSync(file, 'w'));
    const lines: AccessLine[] = [
      {
        method: 'GET',
        path: '/v1/verify',
        status: 200,
        durationMs: 0.123,
        keyId: 'abc123def4',
        domain: 'acme.example',
        code: undefined,
        requestId: undefined,
      },
      {
        method: 'HEAD',
        path: '/v1/"odd"\\path\u00e9',
        status: 401,
        durationMs: 12,
        keyId: null,
        domain: undefined,
        code: 'UNAUTHORIZED',
        requestId: undefined,
      },
      { method: 'POST', path: '/mcp', status: 200, durationMs: 1.5, keyId: 'k', domain: '', code: '', requestId: undefined },
      {
        method: 'GET',
        path: '/v1/verify',
        status: 503,
        durationMs: 2,
        keyId: 'k',
        domain: 'a.example',
        code: 'UNAVAILABLE',
        requestId: 'r-1',
      },
    ];
    for (const line of lines) {
      log.request(line);
      log.log(accessLogLine(line));
    }
    await log.close();
    const written = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const withoutTime = (l: string) => l.replace(/,"time":"[^"]+"/, '');
    expect(written).toHaveLength(8);
    expect(JSON.parse(written[6]!)).toMatchObject({ code: 'UNAVAILABLE', request_id: 'r-1' });
    for (let i = 0; i < 8; i += 2) expect(withoutTime(written[i]!)).toBe(withoutTime(written[i + 1]!));
    expect(JSON.parse(written[2]!)).toMatchObject({
      level: 'info',
      msg: 'request',
      path: '/v1/"odd"\\pathé',
      key_id: null,
      code: 'UNAUTHORIZED',
    });
    expect(Object.keys(JSON.parse(written[0]!))).toEqual([
      'level',
      'time',
      'msg',
      'method',
      'path',
      'status',
      'duration_ms',
      'key_id',
      'domain',
    ]);
  });
});
