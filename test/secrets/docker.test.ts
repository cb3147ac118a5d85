import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { deployFunction, ownWorkloadPorts, type Deployed } from './agent-fixture.js';

/**
 * The read path from inside a container: the docker driver copies the same helper into the
 * image, and the container (host network) mints a token and reads the store. Needs a Docker
 * engine and the locally built base image; without them the test skips and says why.
 */
const BASE = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
const engine = await DockerDriver.available();
const hasBase = engine && (await new Docker().getImage(BASE).inspect().then(() => true, () => false));
const reason = !engine ? 'no Docker engine answers (start dockerd --bridge=none --iptables=false)' : !hasBase ? `base image ${BASE} is missing (run scripts/build-base-images.sh python)` : '';
if (reason) console.warn(`SKIPPED: secrets read from a docker workload: ${reason}`);

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let fn: Deployed;
beforeAll(async () => {
  if (reason) return;
  d = await startTestDaemon(ownWorkloadPorts({ driver: 'docker', dockerImages: { ...workloadConfigFromEnv({}).dockerImages, python: BASE } }));
  c = await cast(d);
  await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'in-container', value: 'read-inside-docker' } });
  fn = await deployFunction(d, c.member.token, c.project.slug, 'boxed');
}, 180_000);
afterAll(async () => {
  // Deleting the function removes its containers and revision images.
  if (d && fn) await d.api('DELETE', `/v1/agents/boxed?project=${c.project.slug}`, { token: c.member.token });
  await d?.close();
});

describe.skipIf(Boolean(reason))('a python function on the docker driver', () => {
  it('reads a project secret through get_secret and receives bound values', async () => {
    expect(await fn.invoke('secret:in-container')).toEqual(expect.objectContaining({ value: 'read-inside-docker' }));
    expect((await d.api('PUT', `/v1/projects/${c.project.id}/agents/boxed/secret-maps/BOXED`, { token: c.member.token, body: { secret_name: 'in-container' } })).status).toBe(200);
    expect((await d.api('POST', `/v1/projects/${c.project.id}/agents/boxed/secret-maps:apply`, { token: c.member.token })).status).toBe(200);
    expect(await fn.env('BOXED')).toEqual({ BOXED: 'read-inside-docker' });
  }, 120_000);
});
