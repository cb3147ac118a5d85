import { expect } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, waitState } from '../agents/helpers.js';

/**
 * The function most trigger tests deliver to: it prints every event it gets (one line each, the
 * CloudEvent attributes under _cloudevent), sleeps when asked (a slow target times out) and
 * raises when asked (a CloudEvent answered 400: permanent).
 */
export const RECORDER_PY = `import json
import threading
import time

_lock = threading.Lock()

def handle(event):
    with _lock:
        print("EVENT " + json.dumps(event, sort_keys=True), flush=True)
    if isinstance(event, dict):
        if event.get("sleep"):
            time.sleep(float(event["sleep"]))
        if event.get("fail"):
            raise ValueError("refused on purpose")
    return {"ok": True}
`;

export interface Api {
  api: TestDaemon['api'];
}

export const triggersPath = (p: string) => `/v1/projects/${p}/triggers`;
export const objectsPath = (p: string, bucket: string) => `/v1/projects/${p}/buckets/${bucket}/objects`;

/** Deploys the recorder function into a project and waits until it serves. */
export async function deployRecorder(d: TestDaemon, token: string, projectSlug: string, name = 'recorder'): Promise<void> {
  const r = await deployForm(d, token, { name, framework: 'function', runtime: 'python' }, archive({ 'main.py': RECORDER_PY }), `?project=${projectSlug}`);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await waitState(d, token, name, 'ready', projectSlug, 60_000);
}

/** Every event the recorder printed, oldest first. */
export async function recorded(d: Api, token: string, projectSlug: string, name = 'recorder'): Promise<any[]> {
  const r = await d.api('GET', `/v1/agents/${name}/logs/history?project=${projectSlug}&limit=5000`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body.lines.filter((l: any) => l.message.startsWith('EVENT ')).map((l: any) => JSON.parse(l.message.slice(6)));
}

/** Polls until `ok` holds (or the time is up, returning the last value for the assertion to show). */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000, every = 25): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The single GET (the only route with firing history). */
export async function history(d: Api, token: string, project: string, name: string): Promise<any[]> {
  const r = await d.api('GET', `${triggersPath(project)}/${name}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body.firings;
}
