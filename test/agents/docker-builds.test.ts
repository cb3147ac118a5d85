import { spawnSync } from 'node:child_process';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HELLO_PY, WHEEL_PY, archive, deployForm, waitState, wheelFolder } from './helpers.js';

/**
 * Python requirements under the docker driver behave as under the process driver: an unreachable
 * index fails the image build in seconds, saying so; PLATFORM_PIP_FIND_LINKS installs offline.
 */
const BASE = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
const engine = await DockerDriver.available();
const hasBase = engine && (await new Docker().getImage(BASE).inspect().then(() => true, () => false));
// The debootstrap base image (scripts/build-base-images.sh) carries python3 without pip.
const hasPip = hasBase && spawnSync('docker', ['run', '--rm', '--network', 'none', BASE, 'python3', '-m', 'pip', '--version']).status === 0;
const reason = !engine
  ? 'no Docker engine answers (start dockerd --bridge=none --iptables=false)'
  : !hasBase
    ? `base image ${BASE} is missing (run scripts/build-base-images.sh python)`
    : !hasPip
      ? `base image ${BASE} has no pip (set PLATFORM_DOCKER_IMAGE_PYTHON to an image with pip, e.g. python:3.12-slim)`
      : '';
if (reason) console.warn(`SKIPPED: docker pip builds: ${reason}`);

let d: TestDaemon;
let token: string;
beforeAll(async () => {
  if (reason) return;
  const w = workloadConfigFromEnv({});
  d = await startTestDaemon({ invokeAuthRequired: false, workloads: { ...w, driver: 'docker', dockerImages: { ...w.dockerImages, python: BASE }, portMin: 34000, portMax: 34999 } });
  token = await d.adminToken();
});
afterAll(async () => d?.close());

describe.skipIf(Boolean(reason))('pip in image builds', { timeout: 180_000 }, () => {
  it('an unreachable index fails the build in seconds with the wheel-folder advice', async () => {
    const t0 = Date.now();
    const r = await deployForm(d, token, { name: 'dock-offline', framework: 'function' }, archive({ 'main.py': HELLO_PY, 'requirements.txt': 'surely-not-installed-pkg-xyz==1.0\n' }));
    expect(r.status).toBe(202);
    const failed = await waitState(d, token, 'dock-offline', 'failed', '', 170_000);
    console.log(`unreachable index (docker driver): the build failed after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    expect(failed.message.split('\n')[0]).toMatch(/^revision dock-offline-00001 failed to build: pip could not reach the package index to install surely-not-installed-pkg-xyz==1\.0\./);
  });

  it('installs from the wheel folder without an index', async () => {
    const w = d.app.ctx.config.workloads;
    w.pip.findLinks = wheelFolder();
    try {
      const r = await deployForm(d, token, { name: 'dock-wheel', framework: 'function' }, archive({ 'main.py': WHEEL_PY, 'requirements.txt': 'tinywheel==0.1\n' }));
      expect(r.status).toBe(202);
      await waitState(d, token, 'dock-wheel', 'ready', '', 170_000);
      expect((await d.api('POST', '/v1/agents/dock-wheel/invoke', { body: {} })).body.reply).toBe('from a local wheel');
      expect((await d.api('GET', '/v1/agents/dock-wheel/logs/build', { token })).text).toMatch(/--no-index --find-links \/tmp\/platform-wheels/);
    } finally {
      w.pip.findLinks = undefined;
    }
  });
});
