/**
 * The monthly workflow uploads the public files to the CDN origin with a Cache-Control each; the
 * gateway serves the same files with the cache-policy table's. The workflow is read as YAML and
 * every upload's lifetime compared with the table, so the two cannot drift apart.
 */
import { describe, expect, it } from 'vitest';
import { CACHE_POLICY, type CachedRoute } from '../../gateway/cache-policy.ts';
import { allSteps, loadWorkflow, MONTHLY } from '../support/workflow.ts';

/** The route the gateway serves a file of public/ at, by its path under public/. */
function routeOf(path: string): CachedRoute {
  const route = path.startsWith('log/tile/') ? '/log/tile/{path}' : `/${path}`;
  if (!(route in CACHE_POLICY)) throw new Error(`the workflow uploads public/${path}, which no gateway route serves`);
  return route as CachedRoute;
}

/** Every `aws s3 cp|sync public/... --cache-control '...'` of the workflow (continuation lines joined). */
function uploads(): { path: string; cacheControl: string }[] {
  const found: { path: string; cacheControl: string }[] = [];
  for (const step of allSteps(loadWorkflow(MONTHLY))) {
    const commands = (step.run ?? '').replace(/\\\n\s*/g, ' ').split('\n');
    for (const command of commands.filter((c) => c.includes('--cache-control'))) {
      const m = /aws s3 (?:cp|sync) public\/(\S+) .*--cache-control '([^']+)'/.exec(command);
      if (!m) throw new Error(`step "${step.name}": a --cache-control not on an upload of public/: ${command.trim()}`);
      found.push({ path: m[1]!, cacheControl: m[2]! });
    }
  }
  return found;
}

describe('CDN cache lifetimes in the monthly workflow', () => {
  it('are the cache-policy table of the route serving each uploaded file', () => {
    const found = uploads();
    expect(found.map((u) => routeOf(u.path)).sort()).toEqual([
      '/.well-known/merchant-verify-keys.json',
      '/.well-known/merchant-verify-log.vkey',
      '/log/checkpoint',
      '/log/tile/{path}',
    ]);
    for (const { path, cacheControl } of found) expect(cacheControl, `public/${path}`).toBe(CACHE_POLICY[routeOf(path)].cacheControl);
  });
});
