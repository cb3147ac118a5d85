import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeAvailable, type Runtime } from '../../src/daemon/runtimes/index.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, waitState, useAgentDaemon } from './helpers.js';

/** Every function template deploys through the daemon on the process driver and answers invoke. */
const TEMPLATES = join(import.meta.dirname, '..', '..', 'templates');
const RUNTIMES: Runtime[] = ['python', 'nodejs', 'go', 'ruby'];
const available = Object.fromEntries(await Promise.all(RUNTIMES.map(async (r) => [r, await runtimeAvailable(r)] as const)));

let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});

describe('function templates on every runtime', () => {
  for (const runtime of RUNTIMES) {
    const why = available[runtime]!.reason;
    if (why) console.warn(`SKIPPED: ${runtime} function deploy: ${why}`);
    it.skipIf(!available[runtime]!.ok)(`${runtime}: deploys the template and invokes it`, { timeout: 120_000 }, async () => {
      const dir = join(TEMPLATES, `function-${runtime}`);
      const files = Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
      const name = `t-${runtime}`;
      const r = await deployForm(d, token, { name, framework: 'function', runtime }, archive(files));
      expect(r.status).toBe(202);
      const ready = await waitState(d, token, name, 'ready', '', 90_000);
      expect(ready.framework).toBe(runtime === 'python' ? 'function' : `function-${runtime}`);
      const inv = await d.api('POST', `/v1/agents/${name}/invoke`, { body: { message: runtime } });
      expect(inv.status).toBe(200);
      expect(inv.body).toMatchObject({ reply: `hello ${runtime}`, user_id: 'anonymous' });
      const hist = await d.api('GET', `/v1/agents/${name}/logs/history`, { token });
      expect(hist.body.lines.some((l: any) => l.message.includes(`greeting`))).toBe(true);
    });
  }
});
