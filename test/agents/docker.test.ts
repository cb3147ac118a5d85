import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HELLO_PY, archive, deployForm, langgraphSample, sleep, waitState } from './helpers.js';

/**
 * The docker driver end to end. Needs a Docker engine and the locally built base image
 * (scripts/build-base-images.sh, which CI runs); without them the tests skip and say why.
 */
const BASE = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
const engine = await DockerDriver.available();
const hasBase = engine && (await new Docker().getImage(BASE).inspect().then(() => true, () => false));
const reason = !engine ? 'no Docker engine answers (start dockerd --bridge=none --iptables=false)' : !hasBase ? `base image ${BASE} is missing (run scripts/build-base-images.sh python)` : '';
if (reason) console.warn(`SKIPPED: docker driver tests: ${reason}`);

let d: TestDaemon;
let token: string;
beforeAll(async () => {
  if (reason) return;
  d = await startTestDaemon({
    invokeAuthRequired: false,
    workloads: { ...workloadConfigFromEnv({}), driver: 'docker', idleMs: 2000, dockerImages: { ...workloadConfigFromEnv({}).dockerImages, python: BASE }, portMin: 33000, portMax: 33999 },
  });
  token = await d.adminToken();
});
afterAll(async () => d?.close());

describe.skipIf(Boolean(reason))('docker driver', { timeout: 180_000 }, () => {
  it('builds an image per revision, runs it on the host network and invokes it', async () => {
    const t0 = Date.now();
    const r = await deployForm(d, token, { name: 'dock', framework: 'function', runtime: 'python' }, archive({ 'main.py': HELLO_PY }));
    expect(r.status).toBe(202);
    await waitState(d, token, 'dock', 'ready', '', 170_000);
    console.log(`deploy-to-ready (python function, docker driver): ${Date.now() - t0} ms`);
    const inv = await d.api('POST', '/v1/agents/dock/invoke', { body: { message: 'container' } });
    expect(inv.status).toBe(200);
    expect(inv.body.reply).toBe('hello container');
    const row = d.db.prepare(`SELECT container FROM agents_instances`).get() as { container: string };
    const info = await new Docker().getContainer(row.container).inspect();
    expect(info.HostConfig.NetworkMode).toBe('host');
    // medium, the default size (spec 1 §8.4): 1 CPU, 1 GiB.
    expect(info.HostConfig.Memory).toBe(1024 ** 3);
    expect(info.HostConfig.NanoCpus).toBe(1e9);
    const hist = await d.api('GET', '/v1/agents/dock/logs/history', { token });
    expect(hist.body.lines.some((l: any) => l.message === 'handling container')).toBe(true);
    const stream = await fetch(`${d.url}/v1/agents/dock/invoke/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'streamed' }) });
    expect(stream.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    expect(JSON.parse((await stream.text()).trim())).toMatchObject({ reply: 'hello streamed' });

    // Redeploy from stored source builds a second image; the new revision serves.
    const firstImage = (d.db.prepare(`SELECT artifact FROM agents_revisions ORDER BY seq DESC LIMIT 1`).get() as { artifact: string }).artifact;
    expect((await d.api('PUT', '/v1/agents/dock/files/main.py', { token, body: { content: HELLO_PY.replace('"hello "', '"ahoy "') } })).status).toBe(200);
    expect((await d.api('POST', '/v1/agents/dock/redeploy', { token })).status).toBe(202);
    await waitState(d, token, 'dock', 'ready', '', 170_000);
    expect((await d.api('POST', '/v1/agents/dock/invoke', { body: { message: 'again' } })).body.reply).toBe('ahoy again');
    const revs = (await d.api('GET', '/v1/agents/dock/revisions', { token })).body.revisions;
    expect(revs.map((r: any) => r.name)).toEqual(['dock-00002', 'dock-00001']);
    const secondImage = (d.db.prepare(`SELECT artifact FROM agents_revisions ORDER BY seq DESC LIMIT 1`).get() as { artifact: string }).artifact;
    expect(secondImage).not.toBe(firstImage);
    expect((await new Docker().getImage(secondImage).inspect()).Id).toMatch(/^sha256:/);

    // A config change rolls a revision on the same image; its instance gets the new size's limits.
    expect((await d.api('PATCH', '/v1/agents/dock/config', { token, body: { instance_size: 'small' } })).status).toBe(200);
    expect((await d.api('POST', '/v1/agents/dock/invoke', { body: { message: 'small' } })).body.reply).toBe('ahoy small');
    const small = d.db.prepare(`SELECT container FROM agents_instances`).get() as { container: string };
    const smallInfo = await new Docker().getContainer(small.container).inspect();
    expect(smallInfo.HostConfig.Memory).toBe(512 * 1024 ** 2);
    expect(smallInfo.HostConfig.NanoCpus).toBe(5e8);

    // Scale to zero, then a cold start from the image.
    const deadline = Date.now() + 10_000;
    while ((d.db.prepare('SELECT COUNT(*) AS n FROM agents_instances').get() as { n: number }).n && Date.now() < deadline) await sleep(100);
    const t1 = performance.now();
    expect((await d.api('POST', '/v1/agents/dock/invoke', { body: { message: 'cold' } })).body.reply).toBe('ahoy cold');
    console.log(`cold start from zero (docker driver): ${(performance.now() - t1).toFixed(0)} ms`);

    const running = d.db.prepare(`SELECT container FROM agents_instances WHERE agent_id = (SELECT id FROM agents_agents WHERE name = 'dock')`).get() as { container: string };
    expect((await d.api('DELETE', '/v1/agents/dock', { token })).status).toBe(200);
    await expect(new Docker().getContainer(running.container).inspect()).rejects.toThrow();
  });

  it('runs an agent in the harness inside its container and streams NDJSON', async () => {
    expect((await deployForm(d, token, { name: 'graph', framework: 'langgraph' }, archive(langgraphSample()))).status).toBe(202);
    await waitState(d, token, 'graph', 'ready', '', 170_000);
    const inv = await d.api('POST', '/v1/agents/graph/invoke', { body: { message: 'weather' } });
    expect(inv.status).toBe(200);
    expect(inv.body.output).toMatch(/facts about weather/);
    const res = await fetch(`${d.url}/v1/agents/graph/invoke/stream`, { method: 'POST', body: JSON.stringify({ message: 'rain' }), headers: { 'content-type': 'application/json' } });
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.at(-1).type).toBe('done');
    expect((await d.api('DELETE', '/v1/agents/graph', { token })).status).toBe(200);
  });

  it('builds the uploaded Dockerfile for the container framework', async () => {
    const server = [
      'import json, os',
      'from http.server import BaseHTTPRequestHandler, HTTPServer',
      'class H(BaseHTTPRequestHandler):',
      '    def reply(self, body):',
      '        data = json.dumps(body).encode()',
      '        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)',
      '    def do_GET(self): self.reply({"status": "ok"})',
      '    def do_POST(self):',
      '        event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))',
      '        self.reply({"output": "container says " + event.get("message", ""), "session_id": event["session_id"]})',
      'HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()',
    ].join('\n');
    const files = { Dockerfile: `FROM ${BASE}\nCOPY server.py /srv/server.py\nCMD ["python3", "/srv/server.py"]\n`, 'server.py': server + '\n' };
    expect((await deployForm(d, token, { name: 'boxed', framework: 'container' }, archive(files))).status).toBe(202);
    await waitState(d, token, 'boxed', 'ready', '', 170_000);
    const inv = await d.api('POST', '/v1/agents/boxed/invoke', { body: { message: 'hi' } });
    expect(inv.status).toBe(200);
    expect(inv.body.output).toBe('container says hi');
    const image = (d.db.prepare(`SELECT artifact FROM agents_revisions WHERE artifact LIKE 'platform-%' ORDER BY created_at DESC LIMIT 1`).get() as { artifact: string }).artifact;
    expect((await d.api('DELETE', '/v1/agents/boxed', { token })).status).toBe(200);
    // Delete discards the agent's images too.
    await expect(new Docker().getImage(image).inspect()).rejects.toThrow();
  });
});
