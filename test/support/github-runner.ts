/**
 * What GitHub's runner gives a workflow step, for the job harness (./workflow-job.ts): `${{ }}`
 * expressions evaluated by GitHub's own evaluator, the GITHUB_OUTPUT file format, and a stand-in
 * `curl` that answers from files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Evaluator, data as expressionData, Lexer, Parser } from '@actions/expressions';

/** Each `${{ expression }}` of a template, evaluated by GitHub's own expression evaluator against `ctx`. */
export function evaluate(template: string, ctx: Record<string, unknown>): string {
  const context = JSON.parse(JSON.stringify(ctx), expressionData.reviver) as InstanceType<typeof expressionData.Dictionary>;
  return template.replace(/\$\{\{(.*?)\}\}/g, (_m, source: string) => {
    const { tokens } = new Lexer(source).lex();
    const value = new Evaluator(new Parser(tokens, Object.keys(ctx), []).parse(), context).evaluate();
    return value.kind === expressionData.Kind.Null ? '' : value.coerceString();
  });
}

/** A stand-in for curl: answers URLs from FAKE_CURL_ROUTES ({url: {status, file}}), logs its argv. */
export const FAKE_CURL = `#!/usr/bin/env node
const fs = require('node:fs');
const args = process.argv.slice(2);
fs.appendFileSync(process.env.FAKE_CURL_LOG, JSON.stringify(args) + '\\n');
const withValue = new Set(['--config', '--output', '-o', '--write-out', '-w', '--retry', '--max-time', '--proto', '--proto-redir']);
let url, output, writeOut = '', fail = false;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (withValue.has(a)) {
    const v = args[++i];
    if (a === '--config' && v === '-') url = /url\\s*=\\s*"([^"]*)"/.exec(fs.readFileSync(0, 'utf8'))[1];
    if (a === '--output' || a === '-o') output = v;
    if (a === '--write-out' || a === '-w') writeOut = v;
  } else if (a === '--fail' || a === '-f') fail = true;
  else if (!a.startsWith('-')) url = a;
}
const route = JSON.parse(process.env.FAKE_CURL_ROUTES)[url];
if (!route) { process.stderr.write('curl: (6) Could not resolve host\\n'); process.exit(6); }
if (route.status >= 400 && fail) { process.stderr.write('curl: (22) The requested URL returned error: ' + route.status + '\\n'); process.exit(22); }
if (route.file && output) fs.copyFileSync(route.file, output);
process.stdout.write(writeOut.replace('%{http_code}', String(route.status)));
`;

export function parseOutputs(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(file)) return out;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    const heredoc = /^([\w-]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      while (++k < lines.length && lines[k] !== heredoc[2]) body.push(lines[k]!);
      out[heredoc[1]!] = body.join('\n');
    } else if (line.includes('=')) out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return out;
}
