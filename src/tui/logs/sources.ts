import { agentRoutes } from '../../api/agents.js';
import { serverlessRoutes } from '../../api/serverless.js';
import type { ApiClient } from '../../client/api-client.js';
import { ApiCallError } from '../../client/errors.js';
import { parseLiveLine, readTextLines } from './live-lines.js';
import { ReplayFilter } from '../../client/log-replay-filter.js';
import type { LogLine, LogSource } from './types.js';

/** A follow stays open as long as someone watches: no client-side cut (Node's fetch cuts an idle body at 300 s). */
export const FOLLOW_WAIT_SECONDS = 7 * 24 * 3600;
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;
/** How often a scaled-to-zero service is asked again (its live route answers and closes at once). */
const IDLE_POLL_MS = 1000;

export interface WorkloadLogOptions {
  name: string;
  /** Project slug, short or id; agents default to the server's choice, services need one. */
  project?: string;
  /** Persisted (agents) or recent (services: the instance's tail) lines read first; default 1000. */
  historyLimit?: number;
  /** Agents: persisted lines at or after this instant only. */
  since?: Date;
  /** Wait before retrying a broken stream, doubled up to RETRY_MAX_MS; tests shorten it. */
  retryMs?: number;
}

export interface LogFollowCallbacks {
  onLine: (line: LogLine) => void;
  /** Something the user should know that does not end the follow (a broken stream being retried). */
  onNotice?: (message: string) => void;
}

/** 4xx other than 408 and 429 will not change by asking again (a deleted agent, no access). */
const isFinal = (e: unknown) => e instanceof ApiCallError && e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429;
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A sleep that an abort ends early. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/** The daemon's own notes in a live stream, said without an HTTP path; undefined for those not worth a line. */
function noteLine(text: string): LogLine | undefined {
  let message: string;
  if (/has no running instance|is scaled to zero/.test(text)) message = 'no running instance (scaled to zero or not started yet): the next request starts one';
  else if (/^\[log stream ended: /.test(text) || !text.trim()) return undefined;
  else message = text;
  return { ts: new Date().toISOString(), revision: '', instance: '', stream: 'system', message };
}

interface Follower {
  /** Opens one live stream (its body), or throws. */
  open(): Promise<Response>;
  /** Wait after a stream that ended by itself before opening the next. */
  idleMs: number;
}

/**
 * Reads live streams one after the other until aborted: a stream that ends (an instance replaced
 * by a new revision, a scaled-to-zero service, a restarted daemon) or breaks is opened again, and
 * the replay filter drops the lines each new connection repeats.
 */
async function followLive(f: Follower, replay: ReplayFilter, cb: LogFollowCallbacks, signal: AbortSignal, retryMs: number): Promise<void> {
  let delay = retryMs;
  let lastNote = '';
  while (!signal.aborted) {
    replay.newConnection();
    let wait = f.idleMs;
    try {
      const res = await f.open();
      if (signal.aborted) {
        await res.body?.cancel().catch(() => undefined);
        return;
      }
      const abort = () => cancel?.();
      let cancel: (() => void) | undefined;
      signal.addEventListener('abort', abort);
      try {
        await readTextLines(res.body!, (text) => {
          const line = parseLiveLine(text);
          if (line) {
            lastNote = '';
            if (replay.accept(line)) cb.onLine(line);
            return;
          }
          const note = noteLine(text);
          // Polling a scaled-to-zero workload says the same thing every time: once is enough.
          if (note && note.message !== lastNote) cb.onLine(note);
          if (note) lastNote = note.message;
        }, (c) => (cancel = c));
      } finally {
        signal.removeEventListener('abort', abort);
      }
      delay = retryMs;
    } catch (e) {
      if (signal.aborted) return;
      if (isFinal(e)) throw e;
      cb.onNotice?.(`live logs interrupted (${messageOf(e)}); retrying in ${(delay / 1000).toFixed(delay < 1000 ? 2 : 0)} s`);
      wait = delay;
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
    await pause(wait, signal);
  }
}

/**
 * An agent's or function's lines: the persisted history (GET /v1/agents/{name}/logs/history), then
 * the live tail, which the daemon moves from instance to instance (scale to zero, crash, a new
 * revision). Resolves when aborted; rejects on an answer that asking again will not change (404,
 * 401, 403). Lines carry their revision, so a viewer can mark a redeploy.
 */
export async function followAgentLogs(client: ApiClient, opts: WorkloadLogOptions, cb: LogFollowCallbacks, signal: AbortSignal): Promise<void> {
  const project = opts.project ? { project: opts.project } : {};
  const replay = new ReplayFilter();
  replay.newConnection();
  const history = await client.call(agentRoutes.logHistory, {
    params: { name: opts.name },
    query: { ...project, limit: String(opts.historyLimit ?? 1000), since: opts.since?.toISOString() },
  });
  for (const l of history.lines) if (!signal.aborted && replay.accept(l)) cb.onLine(l);
  await followAgentLive(client, opts, cb, signal, replay);
}

/**
 * An agent's or function's live tail only (`platform logs NAME -f`): the running instance's recent
 * lines, then live, reconnecting across instances and a restarted daemon with the same backoff and
 * replay filter as followAgentLogs. `replay` carries what an earlier read delivered.
 */
export async function followAgentLive(
  client: ApiClient,
  opts: Pick<WorkloadLogOptions, 'name' | 'project' | 'retryMs'>,
  cb: LogFollowCallbacks,
  signal: AbortSignal,
  replay = new ReplayFilter(),
): Promise<void> {
  const project = opts.project ? { project: opts.project } : {};
  const path = await client.pathFor(agentRoutes.logs, { name: opts.name });
  await followLive(
    {
      open: () => client.request('GET', path, { query: { ...project, follow: 'true' }, headers: { accept: 'text/plain' }, waitSeconds: FOLLOW_WAIT_SECONDS }),
      // The agent route stays open across instances; one that ends was cut (a daemon restart): reconnect soon.
      idleMs: opts.retryMs ?? RETRY_FIRST_MS,
    },
    replay,
    cb,
    signal,
    opts.retryMs ?? RETRY_FIRST_MS,
  );
}

/**
 * A serverless service's lines: the newest instance's tail, then live. The service route ends a
 * stream when its instance stops, so the next one is opened after it (a new revision's instance,
 * or after scale to zero, the next cold start).
 */
export async function followServiceLogs(client: ApiClient, opts: WorkloadLogOptions & { project: string }, cb: LogFollowCallbacks, signal: AbortSignal): Promise<void> {
  const path = await client.pathFor(serverlessRoutes.logs, { projectID: opts.project, name: opts.name });
  await followLive(
    {
      open: () =>
        client.request('GET', path, {
          query: { tail: Math.min(opts.historyLimit ?? 1000, 10_000), follow: 'true' },
          headers: { accept: 'text/plain' },
          waitSeconds: FOLLOW_WAIT_SECONDS,
        }),
      idleMs: IDLE_POLL_MS,
    },
    new ReplayFilter(),
    cb,
    signal,
    opts.retryMs ?? RETRY_FIRST_MS,
  );
}

/** A LogSource over one of the follow functions: errors that end it reach onError. */
function sourceOf(run: (cb: LogFollowCallbacks, signal: AbortSignal) => Promise<void>): LogSource {
  return {
    subscribe(onLine, onError) {
      const ctrl = new AbortController();
      run({ onLine, onNotice: onError }, ctrl.signal).catch((e) => {
        if (!ctrl.signal.aborted) onError(messageOf(e));
      });
      return () => ctrl.abort();
    },
  };
}

/** The logs of an agent or function for the logs view: history, then live across redeploys. */
export function agentLogSource(client: ApiClient, opts: WorkloadLogOptions): LogSource {
  return sourceOf((cb, signal) => followAgentLogs(client, opts, cb, signal));
}

/** The logs of a serverless service for the logs view: the newest instance's tail, then live across instances. */
export function serviceLogSource(client: ApiClient, opts: WorkloadLogOptions & { project: string }): LogSource {
  return sourceOf((cb, signal) => followServiceLogs(client, opts, cb, signal));
}
