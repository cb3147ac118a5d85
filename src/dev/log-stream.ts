import type { ApiClient } from '../client/api-client.js';
import { ReplayFilter } from '../client/log-replay-filter.js';

export interface WorkloadLogLine {
  ts: string;
  instance: string;
  /** The instance's revision (`hello-00002` of instance `hello-00002-0d6d92`). */
  revision: string;
  stream: string;
  message: string;
}

const LINE = /^(\S+) (\S+) (stdout|stderr|system): (.*)$/;

/** One line of the live log route (formatLogLine in the daemon); undefined for anything else. */
export function parseLogLine(text: string): WorkloadLogLine | undefined {
  const m = LINE.exec(text);
  if (!m) return undefined;
  const [, ts, instance, stream, message] = m as unknown as [string, string, string, string, string];
  return { ts, instance, revision: instance.replace(/-[0-9a-f]{6}$/, ''), stream, message };
}

export interface LogFollower {
  stop(): void;
}

/** How long to wait before following again after the stream ended or could not be opened. */
const RECONNECT_MS = 500;
/** The follow request's own bound: long, but a stream that stalls for a day is opened anew. */
const FOLLOW_SECONDS = 24 * 3600;

/**
 * Follows a workload's live logs across instances and redeploys (the daemon's follow moves on to
 * the next instance by itself) and opens the stream again when it ends: before the first deploy
 * (no agent yet), after a daemon restart. A reopened stream repeats the instance's kept lines;
 * the replay filter drops them, so nothing prints twice. `onRevision` is
 * called before the first line of a revision other than the previous line's.
 */
export function followLogs(
  client: ApiClient,
  target: { name: string; project?: string },
  onLine: (line: WorkloadLogLine) => void,
  onRevision: (revision: string) => void,
): LogFollower {
  let stopped = false;
  let cancel: (() => void) | undefined;
  let wake: (() => void) | undefined;
  const replays = new ReplayFilter();
  let lastRevision = '';
  const handle = (text: string) => {
    const line = parseLogLine(text);
    if (!line || !replays.accept(line)) return;
    if (line.revision !== lastRevision) {
      lastRevision = line.revision;
      onRevision(line.revision);
    }
    onLine(line);
  };
  const run = async () => {
    while (!stopped) {
      try {
        const res = await client.request('GET', `/v1/agents/${encodeURIComponent(target.name)}/logs`, {
          query: { ...(target.project ? { project: target.project } : {}), follow: 'true' },
          waitSeconds: FOLLOW_SECONDS,
        });
        replays.newConnection();
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        cancel = () => void reader.cancel().catch(() => undefined);
        if (stopped) cancel();
        const decoder = new TextDecoder();
        let rest = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const parts = (rest + decoder.decode(value, { stream: true })).split('\n');
          rest = parts.pop()!;
          for (const p of parts) handle(p);
        }
      } catch {
        // no agent yet, or the daemon went away: try again shortly
      }
      cancel = undefined;
      if (stopped) break;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, RECONNECT_MS);
        wake = () => {
          clearTimeout(timer);
          r();
        };
      });
    }
  };
  void run();
  return {
    stop() {
      stopped = true;
      cancel?.();
      wake?.();
    },
  };
}
