import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/** A CLI sandbox whose daemon is started up front, and the API as the CLI's own stored credential. */
export function startedSandbox(env: Record<string, string> = {}) {
  const cli = cliSandbox(env);
  let url = '';
  return {
    cli,
    url: () => url,
    async start() {
      const r = await cli.run(['daemon', 'start', '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      url = r.json.url as string;
    },
    async api(method: string, path: string, body?: unknown) {
      const token = JSON.parse(readFileSync(join(cli.home, 'credentials.json'), 'utf8')).local.token as string;
      const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
    },
  };
}
