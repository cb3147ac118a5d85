import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, waitState } from './helpers.js';

/**
 * The nodejs, go and ruby function templates under the docker driver, each on its locally built
 * base image (scripts/build-base-images.sh node go ruby, which CI runs). A runtime whose image is
 * missing skips and says so.
 */
const TEMPLATES = join(import.meta.dirname, '..', '..', 'templates');
const CASES = [
  { runtime: 'nodejs', image: 'platform-node:local', template: 'function-nodejs', file: 'index.js' },
  { runtime: 'go', image: 'platform-go:local', template: 'function-go', file: 'handler.go' },
  { runtime: 'ruby', image: 'platform-ruby:local', template: 'function-ruby', file: 'handler.rb' },
] as const;

const engine = await DockerDriver.available();
const present = new Set<string>();
for (const c of CASES) {
  if (engine && (await new Docker().getImage(c.image).inspect().then(() => true, () => false))) present.add(c.runtime);
  else console.warn(`SKIPPED: ${c.runtime} under the docker driver: ${engine ? `base image ${c.image} is missing (run scripts/build-base-images.sh)` : 'no Docker engine answers'}`);
}

let d: TestDaemon;
let token: string;
beforeAll(async () => {
  if (!present.size) return;
  const base = workloadConfigFromEnv({});
  d = await startTestDaemon({
    invokeAuthRequired: false,
    workloads: { ...base, driver: 'docker', dockerImages: { ...base.dockerImages, nodejs: 'platform-node:local', go: 'platform-go:local', ruby: 'platform-ruby:local' } },
  });
  token = await d.adminToken();
});
afterAll(async () => d?.close());

describe('function templates under the docker driver', { timeout: 240_000 }, () => {
  for (const c of CASES) {
    it.skipIf(!present.has(c.runtime))(`${c.runtime}: builds an image from the template, answers on the host network, delete removes it`, async () => {
      const name = `dock-${c.runtime}`;
      const code = readFileSync(join(TEMPLATES, c.template, c.file), 'utf8');
      expect((await deployForm(d, token, { name, framework: 'function', runtime: c.runtime }, archive({ [c.file]: code }))).status).toBe(202);
      await waitState(d, token, name, 'ready', '', 230_000);
      const inv = await d.api('POST', `/v1/agents/${name}/invoke`, { body: { message: c.runtime } });
      expect(inv.status, JSON.stringify(inv.body)).toBe(200);
      expect(inv.body.reply).toBe(`hello ${c.runtime}`);
      const row = d.db.prepare('SELECT container FROM agents_instances WHERE agent_id = (SELECT id FROM agents_agents WHERE name = ?)').get(name) as { container: string };
      expect((await new Docker().getContainer(row.container).inspect()).HostConfig.NetworkMode).toBe('host');
      expect((await d.api('DELETE', `/v1/agents/${name}`, { token })).status).toBe(200);
      await expect(new Docker().getContainer(row.container).inspect()).rejects.toThrow();
    });
  }
});
