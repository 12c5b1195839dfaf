/** The wrk request scripts of `npm run bench`: each a list of paths asked in turn with one authorization. */
import { nginxPath, pathsScript, rotatingScript } from './gateway.ts';

/**
 * The hot set, the rotating hot set, every record (the working set), never-audited domains and a
 * bad key, against the gateway; the hot set and the working set against nginx.
 */
export async function loadScripts(out: string, key: string, domains: string[], hot: string[], never: string[], rotating: string[]) {
  return {
    rotating: await rotatingScript(
      out,
      'rotating',
      rotating.map((d) => `/v1/verify?domain=${d}`),
      `Bearer ${key}`,
    ),
    hot: await pathsScript(
      out,
      'hot',
      hot.map((d) => `/v1/verify?domain=${d}`),
      `Bearer ${key}`,
    ),
    working: await pathsScript(
      out,
      'working',
      domains.map((d) => `/v1/verify?domain=${d}`),
      `Bearer ${key}`,
    ),
    never: await pathsScript(
      out,
      'never',
      never.map((d) => `/v1/verify?domain=${d}`),
      `Bearer ${key}`,
    ),
    badKey: await pathsScript(
      out,
      'badkey',
      hot.map((d) => `/v1/verify?domain=${d}`),
      'Bearer mvr_0000000000_notavalidkeynotavalidkeynotavalidkeynotavali',
    ),
    nginxHot: await pathsScript(out, 'nginx-hot', hot.map(nginxPath), `Bearer ${key}`),
    nginxWorking: await pathsScript(out, 'nginx-working', domains.map(nginxPath), `Bearer ${key}`),
  };
}
