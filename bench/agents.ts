/**
 * Agents and functions (issue 3): python deploy-to-ready per driver, cold start from zero, warm
 * invoke through the daemon as a ratio to calling the shim directly in the same run, and the
 * latency of the first NDJSON line of a streamed invoke.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { ApiClient } from '../src/client/api-client.js';
import { deployDirectory } from '../src/client/deploy.js';
import { benchLogin, median, ms, percentile, ratio, samples, startDaemonProcess, timeIt, type Row } from './lib.js';

const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'hello-python');
const IDLE_SECONDS = 2;
const BODY = JSON.stringify({ message: 'bench' });

const dockerReady = () => {
  try {
    execFileSync('docker', ['image', 'inspect', 'platform-python:local'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

async function post(url: string, path = '/'): Promise<void> {
  const r = await request(`${url}${path}`, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
  if (r.statusCode !== 200) throw new Error(`POST ${url}${path}: ${r.statusCode} ${await r.body.text()}`);
  await r.body.dump();
}

/** Time to the first NDJSON line of /invoke/stream. */
async function firstLine(url: string, name: string): Promise<number> {
  const t = performance.now();
  const r = await request(`${url}/v1/agents/${name}/invoke/stream`, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
  let took = 0;
  for await (const chunk of r.body) {
    if (!took && String(chunk).includes('\n')) took = performance.now() - t;
  }
  return took;
}

async function driverBench(driver: 'process' | 'docker', rows: Row[]): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), `platform-bench-agents-${driver}-`));
  const env = { PLATFORM_DRIVER: driver, PLATFORM_SCALE_TO_ZERO_SECONDS: String(IDLE_SECONDS), INVOKE_AUTH_REQUIRED: 'false' };
  const daemon = await startDaemonProcess(home, driver === 'docker' ? { ...env, PLATFORM_DOCKER_IMAGE_PYTHON: 'platform-python:local' } : env);
  try {
    const client = new ApiClient(daemon.url, await benchLogin(daemon.url));
    const name = `bench-${driver}`;
    const deployMs = await timeIt(() => deployDirectory(client, { dir: EXAMPLE, name, wait: true, pollMs: 10 }));
    rows.push({ bench: `agents/${driver}`, metric: 'python deploy to ready', value: ms(deployMs), goal: driver === 'process' ? '< 2000 ms' : '' });

    const db = new Database(join(home, 'platform.db'), { readonly: true });
    const instances = () => db.prepare('SELECT port FROM agents_instances').all() as { port: number }[];
    const invokePath = `/v1/agents/${name}/invoke`;
    await post(daemon.url, invokePath);
    while (!instances().length) await new Promise((r) => setTimeout(r, 10));
    const shim = `http://127.0.0.1:${instances()[0]!.port}`;
    await samples(50, () => post(shim));
    await samples(50, () => post(daemon.url, invokePath));
    const direct = await samples(500, () => post(shim));
    const via = await samples(500, () => post(daemon.url, invokePath));
    rows.push({
      bench: `agents/${driver}`,
      metric: 'warm invoke p50 / p99',
      value: `${ms(percentile(via, 50))} / ${ms(percentile(via, 99))}`,
      baseline: `shim direct ${ms(percentile(direct, 50))} / ${ms(percentile(direct, 99))}`,
      ratio: `${ratio(percentile(via, 50), percentile(direct, 50))} (+${ms(percentile(via, 50) - percentile(direct, 50))})`,
      goal: 'adds < 1 ms at p50',
    });
    const lines: number[] = [];
    for (let i = 0; i < 20; i++) lines.push(await firstLine(daemon.url, name));
    rows.push({ bench: `agents/${driver}`, metric: 'first NDJSON line (median)', value: ms(median(lines)) });

    const colds: number[] = [];
    for (let i = 0; i < 3; i++) {
      const deadline = Date.now() + (IDLE_SECONDS + 30) * 1000;
      while (instances().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (instances().length) break;
      colds.push(await timeIt(() => post(daemon.url, invokePath)));
    }
    db.close();
    if (colds.length) {
      rows.push({ bench: `agents/${driver}`, metric: `cold start from zero (median of ${colds.length})`, value: ms(median(colds)), goal: driver === 'process' ? '< 300 ms' : '< 1000 ms' });
    }
  } finally {
    process.kill(daemon.pid, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(home, { recursive: true, force: true });
  }
}

export async function agentsBench(): Promise<Row[]> {
  const rows: Row[] = [];
  await driverBench('process', rows);
  if (dockerReady()) await driverBench('docker', rows);
  else rows.push({ bench: 'agents/docker', metric: 'skipped', value: 'no docker engine or platform-python:local image' });
  return rows;
}
