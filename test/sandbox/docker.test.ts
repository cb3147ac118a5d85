import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerSkipReason } from '../../bench/lib.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, langgraphSample, waitState } from '../agents/helpers.js';
import { escapeAttempts, execute, sbx, startSandboxDaemon, waitWarm } from './helpers.js';

/**
 * Docker mode (spec 2 §4.6): the same escape attempts as process mode against containers with no
 * network, a read-only root, nobody, and memory, CPU and process limits; /v1/call from an agent's
 * revision; an image without the tool runner's python3 is 503 (exited before ready).
 */
const IMAGE = 'platform-python:local';
const skip = await dockerSkipReason(IMAGE);
if (skip) console.warn(`docker sandbox tests skipped: ${skip}`);

let d: TestDaemon;
let image: string;
beforeAll(async () => {
  if (skip) return;
  d = await startSandboxDaemon({ mode: 'docker', image: IMAGE, poolTarget: 2 });
  await waitWarm(d, 1, 60_000);
  const token = await d.adminToken();
  const files = langgraphSample().filter((e) => e.name !== 'agent.py');
  const agentPy = 'import os\nfrom langgraph.graph import END, START, MessagesState, StateGraph\n\ndef add(a, b=0):\n    return {"sum": a + b, "uid": os.getuid()}\n\ndef boom():\n    raise KeyError("k")\n\nbuilder = StateGraph(MessagesState)\nbuilder.add_node("n", lambda s: {"messages": []})\nbuilder.add_edge(START, "n")\nbuilder.add_edge("n", END)\ngraph = builder.compile()\n';
  expect((await deployForm(d, token, { name: 'tooly', framework: 'langgraph' }, archive([...files, { name: 'agent.py', content: agentPy }]))).status).toBe(202);
  image = (await waitState(d, token, 'tooly', 'ready', '', 60_000)).image;
}, 120_000);
afterAll(() => d?.close());

describe.skipIf(Boolean(skip))('docker mode', () => {
  it('runs a snippet in a container: nobody, read-only root, no network', async () => {
    const r = await execute(d, {
      code: 'import os, socket\nprint(os.getuid(), os.getcwd())\ntry:\n    open("/etc/x", "w")\nexcept OSError as e:\n    print("ro", type(e).__name__)\nprint(sorted(n for n in socket.if_nameindex()))',
    });
    expect(r.status).toBe(200);
    expect(r.body.stdout).toMatch(/^65534 \/work\nro (OSError|PermissionError)\n\[\(1, 'lo'\)\]\n$/);
    console.log(`docker warm execute: ${r.ms.toFixed(0)} ms round trip`);
  });

  escapeAttempts(() => d);

  it('/v1/call runs a function of the agent in a one-use container', async () => {
    const r = await sbx(d, 'POST', '/v1/call', { image, function: 'add', args: { a: 1, b: 2 } });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ sum: 3, uid: 65534 });
    const raised = await sbx(d, 'POST', '/v1/call', { image, function: 'boom' });
    expect(raised.body.error).toBe("KeyError: 'k'");
  });

  it('503 when the image lacks the tool runner (exits before ready)', async () => {
    // A revision whose artifact is an image with no python3 (the redis base image).
    const fake = `local/fake/redis@sha256:${randomUUID().replaceAll('-', '')}`;
    d.db
      .prepare(
        `INSERT INTO agents_revisions (id, agent_id, seq, name, reason, build_id, image, artifact, env, secret_keys, config, state, message, created_at, mcp_servers)
         SELECT ?, agent_id, seq + 1000, name || '-fake', reason, build_id, ?, 'platform-redis:local', env, secret_keys, config, state, message, created_at, mcp_servers FROM agents_revisions WHERE image = ?`,
      )
      .run(randomUUID(), fake, image);
    const r = await sbx(d, 'POST', '/v1/call', { image: fake, function: 'add' });
    expect(r.status).toBe(503);
    expect(r.body.error).toMatch(/tool sandbox exited before ready/);
  });
});
