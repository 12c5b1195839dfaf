/**
 * Checks real answers against a served OpenAPI 3.1 document: which documented operation a
 * request reaches, whether its status is documented there, whether the documented headers are
 * sent with their documented values, and whether the body validates against the documented
 * schema (ajv's JSON Schema 2020-12 build, the dialect OpenAPI 3.1 uses, with the standard formats).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import type { Reply } from './gateway.ts';

// ajv-formats is CommonJS: its module object is the plugin, and carries it again as `default`.
const addFormats = addFormatsModule.default;

type Json = Record<string, any>;

export interface ServedDocument {
  doc: Json;
  /** The documented path template a request path falls under (`/log/tile/{path}` for `/log/tile/0/000.p/5`), or null. */
  pathOf(requestPath: string): string | null;
  /** Checks one answer against the operation of `method` on the documented `path`; returns what it checked. */
  check(path: string, method: string, reply: Reply): { status: string; type: string | null };
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The document, with a validator that resolves its `#/components/schemas/...` references. */
export function servedDocument(doc: Json): ServedDocument {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    // A path parameter of the tiles holds slashes (`0/x001/234`).
    re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '.+')}$`),
  }));
  return {
    doc,
    pathOf: (requestPath) => templates.find((t) => t.re.test(requestPath))?.template ?? null,
    check(path, method, reply) {
      const where = `${method} ${path} -> ${reply.status}`;
      const operations = doc.paths[path] as Json;
      // A method the path does not take is answered under the path's operation (405 is documented there).
      const asked = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
      const name = asked in operations ? asked : Object.keys(operations)[0]!;
      const operation = operations[name] as Json;
      const status = String(reply.status);
      const response = operation.responses[status] as Json | undefined;
      expect(
        response,
        `${where}: status ${status} is not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`,
      ).toBeDefined();
      for (const [header, spec] of Object.entries((response!.headers ?? {}) as Json)) {
        const value = reply.headers.get(header);
        if (spec.required) expect(value, `${where}: documented header ${header} is missing`).not.toBeNull();
        if (value === null) continue;
        if (spec.schema?.const !== undefined) expect(value, `${where}: header ${header}`).toBe(spec.schema.const);
        if (spec.schema?.pattern !== undefined) expect(value, `${where}: header ${header}`).toMatch(new RegExp(spec.schema.pattern));
      }
      const content = response!.content as Json | undefined;
      const type = reply.headers.get('content-type');
      if (!content) {
        expect(reply.bytes.length, `${where}: no body is documented`).toBe(0);
        return { status, type: null };
      }
      expect(Object.keys(content), `${where}: content-type`).toContain(type);
      // HEAD: the GET's headers, no body.
      if (method === 'HEAD') return { status, type };
      const media = content[type!] as Json;
      if (!media.schema) {
        expect(reply.bytes.length, `${where}: a body`).toBeGreaterThan(0);
        return { status, type };
      }
      const validate = ajv.getSchema(`openapi.json#/${pointer('paths', path, name, 'responses', status, 'content', type!, 'schema')}`)!;
      const body = /json/.test(type!) ? JSON.parse(reply.text) : reply.text;
      if (!validate(body))
        throw new Error(
          `${where}: the body does not validate against the documented schema: ${ajv.errorsText(validate.errors)}\n${reply.text.slice(0, 500)}`,
        );
      return { status, type };
    },
  };
}
