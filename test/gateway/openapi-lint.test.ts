/**
 * The OpenAPI document passes a real linter: Redocly's "recommended" ruleset, with no errors
 * and no warnings. A broken document shows the linter really runs.
 */
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../gateway/openapi.ts';

// The server URL is the configured issuer. A `.test` name (RFC 2606), because the recommended
// rule no-server-example.com would flag example.com: a property of the test's value, not of the document.
const ISSUER = 'verify.merchant.test';

async function lintJson(document: unknown): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  return lintFromString({ source: JSON.stringify(document, null, 2), absoluteRef: 'openapi.json', config });
}

/** One line per problem: severity, rule id, message, where. */
function describeProblems(problems: NormalizedProblem[]): string[] {
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer ?? '#').join(', ')}`);
}

describe('openApiDocument under the recommended ruleset', () => {
  it('has no errors and no warnings', async () => {
    const problems = await lintJson(openApiDocument({ issuer: ISSUER, schemaUrl: `https://${ISSUER}/schemas/verification/v1` }));
    expect(describeProblems(problems.filter((p) => p.severity === 'error')), 'lint errors').toEqual([]);
    expect(describeProblems(problems.filter((p) => p.severity === 'warn')), 'lint warnings').toEqual([]);
  });
});

describe('the linter', () => {
  it('reports a broken document (a response without a description)', async () => {
    const broken = {
      openapi: '3.1.0',
      info: { title: 'broken', version: '1.0.0' },
      paths: { '/x': { get: { responses: { '200': { content: { 'application/json': { schema: { type: 'object' } } } } } } } },
    };
    const problems = await lintJson(broken);
    expect(problems.length).toBeGreaterThan(0);
    expect(describeProblems(problems.filter((p) => p.severity === 'error')).join('\n')).toMatch(/description/);
  });
});
