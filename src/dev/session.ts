import { resolve } from 'node:path';
import { LIMITS } from '../api/agents.js';
import type { ApiClient } from '../client/api-client.js';
import { DeployLoop } from './deploy-loop.js';
import { listenForKeys, type Hotkey } from './hotkeys.js';
import { followLogs } from './log-stream.js';
import { openInBrowser } from '../client/open-browser.js';
import type { Addresses, DevOutput } from './output.js';
import { loadPayload } from './payload.js';
import { watchFolder } from './watcher.js';

export interface DevOptions {
  client: ApiClient;
  dir: string;
  name: string;
  project?: string;
  /** --data: the payload `i` invokes with (else payload.json). */
  data?: string;
  output: DevOutput;
  /** Take single keys from stdin (a terminal, not --json). */
  hotkeys: boolean;
  verbose: boolean;
  /** Quiet time after a change before deploying (a burst of saves is one deploy). */
  debounceMs?: number;
}

export interface DevSummary {
  deploys: number;
  failures: number;
  /** A deploy was still running at quit: its polling would hold the process until the build ends. */
  deployInFlight: boolean;
}

/**
 * The inner loop of `platform dev`: deploy the folder, then redeploy on every save while the
 * daemon keeps serving the last good revision through failures; follow the workload's logs; take
 * hotkeys. Resolves when the user quits (q, Ctrl-C) or the process gets SIGINT, SIGTERM or SIGHUP,
 * with the terminal given back as it was.
 */
export async function runDev(o: DevOptions): Promise<DevSummary> {
  const target = { dir: o.dir, name: o.name, project: o.project };
  const query = o.project ? { project: o.project } : {};
  const summary: DevSummary = { deploys: 0, failures: 0, deployInFlight: false };
  let addresses: Addresses | undefined;
  const watching = { dir: resolve(o.dir), hotkeys: o.hotkeys };

  const loop = new DeployLoop(o.client, target, {
    onStart: (t) => o.output.deploying(t),
    onState: (a) => o.output.state(a),
    onBuildOutput: o.verbose ? (chunk) => o.output.buildOutput(chunk) : undefined,
    onDone: (outcome, t) => {
      summary.deploys++;
      if (!outcome.ok) summary.failures++;
      o.output.done(outcome, t);
      if (!addresses && outcome.agent) {
        addresses = { name: o.name, invokeUrl: new URL(`/v1/agents/${encodeURIComponent(o.name)}/invoke`, o.client.baseUrl).toString(), publicUrl: outcome.agent.public_url };
        o.output.addresses(addresses, watching);
      }
    },
  });

  const invoke = async () => {
    let payload;
    try {
      payload = loadPayload(o.data, o.dir);
    } catch (e) {
      o.output.invoked(o.data !== undefined ? '--data' : 'payload.json', { ok: false, error: (e as Error).message });
      return;
    }
    try {
      const res = await o.client.request('POST', `/v1/agents/${encodeURIComponent(o.name)}/invoke`, { query, body: payload.body, waitSeconds: LIMITS.timeoutMaxSeconds + 15 });
      const text = await res.text();
      let response: unknown = text;
      try {
        response = JSON.parse(text);
      } catch {
        // a function may answer with plain text
      }
      o.output.invoked(payload.from, { ok: true, response });
    } catch (e) {
      o.output.invoked(payload.from, { ok: false, error: (e as Error).message });
    }
  };

  const open = async () => {
    if (!addresses?.publicUrl) {
      o.output.note(addresses ? 'this workload has no public address to open' : 'nothing deployed yet: wait for the first deploy');
      return;
    }
    o.output.opened(addresses.publicUrl, await openInBrowser(addresses.publicUrl));
  };

  let quit!: () => void;
  const quitting = new Promise<void>((r) => (quit = r));
  const onKey = (key: Hotkey) => {
    if (key === 'q') quit();
    else if (key === 'r') loop.request({ kind: 'key' });
    else if (key === 'i') void invoke();
    else if (key === 'o') void open();
    else if (key === 'l') {
      o.output.clear();
      if (addresses) o.output.addresses(addresses, watching);
    }
  };

  const watcher = watchFolder(o.dir, (first) => loop.request({ kind: 'save', ...first }), { debounceMs: o.debounceMs });
  const logs = followLogs(o.client, target, (l) => o.output.log(l), (r) => o.output.revision(r));
  const restoreTerminal = o.hotkeys ? listenForKeys(process.stdin, onKey) : undefined;
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, quit);
  loop.request({ kind: 'start' });
  try {
    await quitting;
  } finally {
    for (const s of signals) process.off(s, quit);
    restoreTerminal?.();
    watcher.close();
    logs.stop();
    loop.stop();
    summary.deployInFlight = loop.busy;
    o.output.stopped();
  }
  return summary;
}
