import Docker from 'dockerode';
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { CRASH_PY, SERVER_PY } from './data-helpers.js';

/**
 * `platform services ... --wait` with instances that really run: a source folder deployed as a
 * process, served through the Host router, a crashing revision that leaves traffic where it was,
 * a split with a tag address, logs (tail and follow) and metrics, all through the CLI.
 */

const IMAGE = 'platform-python:local';
const engine = await DockerDriver.available();
const hasImage = engine && (await new Docker().getImage(IMAGE).inspect().then(() => true, () => false));
const noDocker = !engine ? 'no Docker engine answers' : !hasImage ? `image ${IMAGE} is missing (scripts/build-base-images.sh python)` : '';
if (noDocker) console.warn(`SKIPPED: services create --image --wait through docker: ${noDocker}`);

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const cli = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '60' });
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'platform-svc-wait-'));
});

afterAll(async () => {
  await cli.stop();
  rmSync(dir, { recursive: true, force: true });
});

function folder(name: string, files: Record<string, string>): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

/** A request to an address of the Host router, sent to the daemon's port with that Host. */
async function viaHost(url: string): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  const res = await request(`http://127.0.0.1:${u.port}/`, { headers: { host: u.host } });
  const text = await res.body.text();
  return { status: res.statusCode, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('platform services --wait', { timeout: 120_000 }, () => {
  let url = '';

  it('deploy DIR --wait returns once the revision serves; the public address answers from it', async () => {
    const src = folder('hello', { 'main.py': SERVER_PY });
    const r = await cli.run(['services', 'deploy', src, '--publish', '--wait', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.service).toMatchObject({ name: 'hello', state: 'ready', ready: true, latest_ready_revision: 'hello-00001' });
    url = r.json.service.url;
    const res = await viaHost(url);
    expect(res.status).toBe(200);
    expect(res.body.revision).toBe('hello-00001');

    const human = await cli.run(['services', 'get', 'hello']);
    expect(human.stdout).toMatch(/^state\s+ready$/m);
    expect(human.stdout).toMatch(/^traffic\s+hello-00001 100%$/m);
  });

  it('a revision that crashes: --wait exits 1 with its reason, and traffic stays on the last ready revision', async () => {
    const broken = folder('hello-broken', { 'main.py': CRASH_PY });
    const r = await cli.run(['services', 'deploy', broken, '--name', 'hello', '--wait']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/hello revision hello-00002 is not ready; traffic stays on hello-00001/);
    expect(r.stderr).toMatch(/DATABASE_URL is not set|exit/);
    expect((await viaHost(url)).body.revision).toBe('hello-00001');
    const revs = await cli.run(['services', 'revisions', 'hello']);
    expect(revs.stdout).toMatch(/^hello-00002\s+2\s+not_ready\s/m);
    expect(revs.stdout).toMatch(/^hello-00001\s+1\s+ready\s+100%/m);
  });

  it('a fixed revision takes the traffic; traffic --wait splits it, the tag has its own address', async () => {
    const fixed = folder('hello-v3', { 'main.py': SERVER_PY.replace("msg=os.environ.get('MSG', '')", "msg='three'") });
    const r = await cli.run(['services', 'deploy', fixed, '--name', 'hello', '--wait']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/✓ hello: hello-00003 serving/);
    expect((await viaHost(url)).body.msg).toBe('three');

    const t = await cli.run(['services', 'traffic', 'hello', '--to', '1=50', '--to', 'latest=50', '--tag', '1=old', '--wait']);
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/^hello-00001\s+50%\s+old\s+http:\/\/old-hello-/m);
    expect(t.stdout).toMatch(/^hello-00003\s+50%/m);
    const tagUrl = /^hello-00001\s+50%\s+old\s+(\S+)$/m.exec(t.stdout)![1]!;
    expect((await viaHost(tagUrl)).body.revision).toBe('hello-00001');
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) seen.add((await viaHost(url)).body.revision);
    expect([...seen].sort()).toEqual(['hello-00001', 'hello-00003']);

    const m = await cli.run(['services', 'metrics', 'hello', '--json']);
    expect(m.json.instances.current).toBeGreaterThanOrEqual(1);
    expect(m.json.revisions.find((x: { name: string }) => x.name === 'hello-00003')).toMatchObject({ traffic_percent: 50, latest_created: true, ready: true });
  });

  it('logs prints the newest instance output; -f keeps printing new lines', async () => {
    const logs = await cli.run(['services', 'logs', 'hello', '--tail', '50']);
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/listening on \d+|served \//);

    const follow = execa('node', [BIN, 'services', 'logs', 'hello', '-f', '--tail', '1'], { env: cli.env, extendEnv: true, stdin: 'ignore', reject: false });
    let out = '';
    const marker = `/follow-${Date.now()}`;
    const got = new Promise<void>((resolve) => {
      follow.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes(`served ${marker}`)) resolve();
      });
    });
    // Requests until the followed instance logs one (the split may send some to the other revision).
    const u = new URL(url);
    const poke = setInterval(() => void request(`http://127.0.0.1:${u.port}${marker}`, { headers: { host: u.host } }).then((r) => r.body.text()).catch(() => {}), 200);
    try {
      await got;
    } finally {
      clearInterval(poke);
      follow.kill('SIGINT');
      await follow;
    }
    expect(out).toContain(`served ${marker}`);
  });
});

describe.skipIf(Boolean(noDocker))('platform services create --image --wait through docker', { timeout: 120_000 }, () => {
  it('an image with a command override serves on its public address; delete removes it', async () => {
    const r = await cli.run(['services', 'create', 'img', '--image', IMAGE, '--command', 'python3', '--arg', '-u', '--arg', '-c', '--arg', SERVER_PY, '--env', 'MSG=from-docker', '--publish', '--wait', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ name: 'img', ready: true, latest_ready_revision: 'img-00001', command: ['python3'], args: ['-u', '-c', SERVER_PY] });
    const res = await viaHost(r.json.url);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ revision: 'img-00001', msg: 'from-docker' });
    const del = await cli.run(['services', 'delete', 'img', '--yes']);
    expect(del.exitCode, del.stderr).toBe(0);
    expect((await viaHost(r.json.url)).status).not.toBe(200);
  });
});
