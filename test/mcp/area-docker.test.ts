import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ADD_PY, SYNTAX_ERROR_PY, base, bearerFor, rpc, waitVersion } from './area-helpers.js';

/**
 * An MCP server on the docker driver: each version is a real image from the local python base
 * image with tools/<name>.py, its digest the image id Docker reports; a tool with a syntax error
 * fails the image build with the check's line. Skips (and says why) without dockerd or the image.
 */
const BASE = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
const engine = await DockerDriver.available();
const hasBase = engine && (await new Docker().getImage(BASE).inspect().then(() => true, () => false));
const reason = !engine ? 'no Docker engine answers' : !hasBase ? `base image ${BASE} is missing (run scripts/build-base-images.sh python)` : '';
if (reason) console.warn(`SKIPPED: MCP docker driver test: ${reason}`);

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  if (reason) return;
  const w = workloadConfigFromEnv({});
  d = await startTestDaemon({ workloads: { ...w, driver: 'docker', dockerImages: { ...w.dockerImages, python: BASE }, portMin: 34000, portMax: 34999 } });
  c = await cast(d);
});
afterAll(async () => {
  // Delete removes the server's images (no other version uses them), so the test leaves none behind.
  if (d && c) await d.api('DELETE', base(c.project.id, 'dock'), { token: c.admin.token });
  await d?.close();
});

describe.skipIf(Boolean(reason))('MCP server on the docker driver', { timeout: 240_000 }, () => {
  it('builds an image, records the digest Docker reports, serves tools/call; a syntax error fails the build and version 1 serves on', async () => {
    const t0 = Date.now();
    await d.api('POST', base(c.project.id), { token: c.admin.token, body: { name: 'dock' } });
    await d.api('PUT', `${base(c.project.id, 'dock')}/tools/add`, { token: c.admin.token, body: { handler: ADD_PY } });
    const s = await waitVersion(d, c.admin.token, c.project.id, 'dock', 1, 'ready', 200_000);
    console.log(`MCP publish-to-ready (docker driver): ${Date.now() - t0} ms`);
    const v1 = (await d.api('GET', `${base(c.project.id, 'dock')}/versions`, { token: c.admin.token })).body.versions[0];
    const image = await new Docker().getImage(v1.image_digest).inspect();
    expect(v1.image_digest).toBe(image.Id);
    expect(s.image).toBe(`platform-mcp-${c.project.short}-dock:v1`);
    expect(image.RepoTags).toContain(s.image);
    const r = await rpc(s.url, await bearerFor(d, c.project.id, 'dock'), 'tools/call', { name: 'add', arguments: { a: 2, b: 3 } });
    expect(r.body.result.content[0].text).toBe('5');
    const row = d.db.prepare('SELECT container FROM mcp_instances').get() as { container: string };
    expect(row.container).toMatch(/^[0-9a-f]{64}$/);

    await d.api('PUT', `${base(c.project.id, 'dock')}/tools/broken`, { token: c.admin.token, body: { handler: SYNTAX_ERROR_PY } });
    const failed = await waitVersion(d, c.admin.token, c.project.id, 'dock', 2, 'failed', 200_000);
    expect(failed).toMatchObject({ state: 'failed', version: 1 });
    expect(failed.message).toMatch(/SyntaxError/);
    expect((await rpc(s.url, await bearerFor(d, c.project.id, 'dock'), 'tools/call', { name: 'add', arguments: { a: 1, b: 1 } })).body.result.content[0].text).toBe('2');
  });
});
