import { basename, resolve } from 'node:path';
import { agentRoutes, type AgentView } from '../api/agents.js';
import type { ApiClient } from './api-client.js';
import { AbortError } from './errors.js';
import { detectWorkload, type Detected } from './detect.js';
import { packDirectory, readManifest } from './pack.js';

export interface DeployOptions {
  dir: string;
  name?: string;
  framework?: string;
  runtime?: string;
  project?: string;
  config?: string;
  wait: boolean;
  /** Called on every state change while waiting (spinner, progress lines). */
  onState?: (agent: AgentView) => void;
  /** Build output as the daemon produces it (while waiting). */
  onBuildOutput?: (chunk: string) => void;
  /** What a directory without a manifest was taken for. */
  onDetected?: (d: Detected) => void;
  pollMs?: number;
  timeoutMs?: number;
}

export interface DeployResult {
  agent: AgentView;
  build_id: string;
  files: number;
  skipped: string[];
}

/** A DNS-label name from a directory name, for deploys without --name or a manifest name. */
export const nameFromDir = (dir: string) =>
  basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '')
    .slice(0, 63) || 'app';

/**
 * Packs a directory, uploads it as the deploy's multipart body and, unless told not to, waits
 * for ready or failed. A failed build is an AbortError carrying the build output.
 */
export async function deployDirectory(client: ApiClient, o: DeployOptions): Promise<DeployResult> {
  const manifest = readManifest(o.dir);
  const name = o.name ?? manifest.name ?? nameFromDir(o.dir);
  let framework = o.framework ?? manifest.framework;
  let runtime = o.runtime ?? manifest.runtime;
  // The API's default framework is adk (spec 1 §4.12); the CLI never lets a folder fall to it unseen.
  if (!framework || (framework === 'function' && !runtime)) {
    const found = detectWorkload(o.dir, runtime);
    o.onDetected?.(found);
    framework = found.framework;
    runtime = found.runtime;
  }
  const packed = await packDirectory(o.dir);
  if (!packed.files.length) throw new AbortError(`nothing to deploy in ${o.dir}`, 'create a project with `platform init --template function-python`');
  const form = new FormData();
  form.append('name', name);
  if (framework) form.append('framework', framework);
  if (runtime) form.append('runtime', runtime);
  if (o.config) form.append('config', o.config);
  form.append('code', new Blob([new Uint8Array(packed.archive)], { type: 'application/gzip' }), 'code.tar.gz');
  const res = await client.request('POST', agentRoutes.deploy.path, { query: o.project ? { project: o.project } : {}, rawBody: form });
  const accepted = (await res.json()) as { agent: AgentView; build_id: string };
  let agent = accepted.agent;
  o.onState?.(agent);
  if (o.wait && o.onBuildOutput) await followBuild(client, name, o.project, accepted.build_id, o.onBuildOutput);
  if (o.wait) agent = await waitForAgent(client, name, o.project, agent, o);
  return { agent, build_id: accepted.build_id, files: packed.files.length, skipped: packed.skipped };
}

/** Polls until the agent is ready or failed; failed becomes an AbortError with the build output. */
export async function waitForAgent(
  client: ApiClient,
  name: string,
  project: string | undefined,
  start: AgentView,
  o: { onState?: (a: AgentView) => void; pollMs?: number; timeoutMs?: number },
): Promise<AgentView> {
  let agent = start;
  const deadline = Date.now() + (o.timeoutMs ?? 35 * 60_000);
  while (agent.state !== 'ready' && agent.state !== 'failed') {
    if (Date.now() > deadline) throw new AbortError(`${name} is still ${agent.state}`, `check it with \`platform agents get ${name}\``);
    await new Promise((r) => setTimeout(r, o.pollMs ?? 200));
    const next = await client.call(agentRoutes.get, { params: { name }, query: project ? { project } : {} });
    if (next.state !== agent.state || next.message !== agent.message) o.onState?.(next);
    agent = next;
  }
  if (agent.state === 'failed') {
    throw new AbortError(`${name} failed to deploy:\n${agent.message ?? '(no output)'}`, `fix the source and run \`platform deploy\` again; the whole build log: \`platform logs ${name} --build\``);
  }
  // Ready on an older revision: the new one failed while the previous one kept serving.
  if (agent.serving_revision && agent.latest_revision && agent.serving_revision !== agent.latest_revision) {
    throw new AbortError(
      `${name}: revision ${agent.latest_revision} failed; ${agent.serving_revision} keeps serving:\n${agent.message ?? '(no output)'}`,
      `fix the source and run \`platform deploy\` again; the whole build log: \`platform logs ${name} --build --revision ${agent.latest_revision}\``,
    );
  }
  return agent;
}

/**
 * Streams one build's output until the build ends. Best effort: when the stream cannot be had
 * (an older daemon, a dropped connection) the caller's polling still reports the outcome.
 */
export async function followBuild(client: ApiClient, name: string, project: string | undefined, build: string, onChunk: (chunk: string) => void): Promise<void> {
  try {
    const res = await client.request('GET', agentRoutes.buildLog.path.replace('{name}', encodeURIComponent(name)), {
      query: { ...(project ? { project } : {}), build, follow: 'true' },
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) onChunk(decoder.decode(chunk, { stream: true }));
  } catch {
    // the outcome comes from the agent's state
  }
}
