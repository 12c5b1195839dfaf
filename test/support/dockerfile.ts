/**
 * The project's Dockerfile as the tests read it, without Docker: instructions with continuation
 * lines joined and comments dropped, stages tracked, and the final stage's ENV, ENTRYPOINT/CMD,
 * HEALTHCHECK and COPY sources picked out.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const run = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// A Dockerfile reader: continuation lines joined, comments dropped, stages tracked.

export interface Instruction {
  stage: number;
  op: string;
  args: string;
  line: number;
}

export function readDockerfile(text: string): { instructions: Instruction[]; stages: number; globalArgs: Record<string, string> } {
  const instructions: Instruction[] = [];
  const globalArgs: Record<string, string> = {};
  const lines = text.split('\n');
  let stage = -1;
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      line = line.replace(/\\\s*$/, ' ');
      i++;
      if (/^\s*#/.test(lines[i]!)) continue; // comment lines inside a continuation are dropped
      line += lines[i]!.trim();
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile line ${start + 1}: cannot read "${line}"`);
    const op = m[1]!.toUpperCase();
    if (op === 'FROM') stage++;
    if (op === 'ARG' && stage < 0) {
      const [name, value = ''] = m[2]!.trim().split('=');
      globalArgs[name!] = value;
    }
    instructions.push({ stage, op, args: m[2]!.trim(), line: start + 1 });
  }
  return { instructions, stages: stage + 1, globalArgs };
}

/** ENV key=value pairs (quoted values allowed). */
export function envPairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|'([^']*)'|(\S*))/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(args))) out[m[1]!] = m[3] ?? m[4] ?? m[5] ?? '';
  if (!Object.keys(out).length) throw new Error(`ENV ${args}: only the key=value form is read here`);
  return out;
}

export const execForm = (args: string, what: string): string[] => {
  if (!args.startsWith('[')) throw new Error(`${what} must use the exec (JSON array) form, got: ${args}`);
  return JSON.parse(args) as string[];
};

export const dockerfileText = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
export const dockerfile = readDockerfile(dockerfileText);
export const finalStage = dockerfile.stages - 1;
export const final = dockerfile.instructions.filter((x) => x.stage === finalStage);
export const finalEnv: Record<string, string> = Object.assign({}, ...final.filter((x) => x.op === 'ENV').map((x) => envPairs(x.args)));
export const only = (op: string) => {
  const found = final.filter((x) => x.op === op);
  if (found.length !== 1) throw new Error(`the final stage should have one ${op}, has ${found.length}`);
  return found[0]!;
};
export const command = () => [...execForm(only('ENTRYPOINT').args, 'ENTRYPOINT'), ...execForm(only('CMD').args, 'CMD')];
export const healthcheck = () => {
  const m = /^((?:--[a-z-]+=\S+\s+)*)CMD\s+(.*)$/.exec(only('HEALTHCHECK').args);
  if (!m) throw new Error('HEALTHCHECK should be HEALTHCHECK [options] CMD [...]');
  return { options: m[1]!.trim(), cmd: execForm(m[2]!, 'HEALTHCHECK CMD') };
};
/** COPY sources from the build context (not --from another stage), in every stage. */
export const contextCopies = () =>
  dockerfile.instructions
    .filter((x) => (x.op === 'COPY' || x.op === 'ADD') && !/--from=/.test(x.args))
    .map((x) => {
      const parts = x.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      return { sources: parts.slice(0, -1), dest: parts[parts.length - 1]!, stage: x.stage };
    });
export const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  imports?: Record<string, unknown>;
};
