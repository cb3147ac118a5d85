import type { ApiClient } from '../../client/api-client.js';
import { agentRoutes, type LogLine } from '../../api/agents.js';
import { serverlessRoutes } from '../../api/serverless.js';
import type { LogSource } from '../logs/LogsView.js';

/** A follow stays open as long as someone watches: no client-side cut (as `services logs -f`). */
const FOLLOW_WAIT_SECONDS = 7 * 24 * 3600;
/** Pause before following again when the daemon closed the stream (a restart, a dropped connection). */
const RECONNECT_MS = 1000;
/** Persisted lines read before following: enough to see the last failure. */
const HISTORY_LIMIT = 500;

// The daemon's text lines: "<ts> <instance> <stream>: <message>" (src/daemon/runtime/log-capture.ts).
const TEXT_LINE = /^(\S+) (\S+) (stdout|stderr|system): (.*)$/;
// Instances are named after their revision (<name>-00003-<suffix>).
const REVISION_OF_INSTANCE = /^(.+-\d{5})(?:-[a-z0-9]+)*$/;

export function parseTextLine(text: string): LogLine {
  const m = TEXT_LINE.exec(text);
  if (!m) return { ts: new Date().toISOString(), revision: '', instance: '', stream: 'system', message: text };
  const [, ts, instance, stream, message] = m as unknown as [string, string, string, LogLine['stream'], string];
  return { ts, instance, stream, message, revision: REVISION_OF_INSTANCE.exec(instance)?.[1] ?? '' };
}

/** Reads a text/plain body line by line until it ends or `stopped()`; resolves when it ends. */
async function readLines(res: Response, onText: (line: string) => void, stopped: () => boolean, onReader: (cancel: () => void) => void): Promise<void> {
  const reader = res.body!.getReader();
  onReader(() => void reader.cancel().catch(() => undefined));
  const decoder = new TextDecoder();
  let rest = '';
  while (!stopped()) {
    const { done, value } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (l) onText(l);
  }
}

/**
 * Follows a text stream, reconnecting when it ends, until stopped. `first` runs once before (the
 * persisted history); lines at or before its newest time are the live stream's replay and skipped.
 */
function followSource(open: () => Promise<Response>, first?: () => Promise<LogLine[]>): LogSource {
  return {
    subscribe(onLine, onError) {
      let stopped = false;
      let cancel: (() => void) | undefined;
      let newest = '';
      void (async () => {
        if (first) {
          try {
            for (const l of await first()) {
              onLine(l);
              newest = l.ts;
            }
          } catch (e) {
            onError(`history: ${(e as Error).message}`);
          }
        }
        while (!stopped) {
          try {
            const res = await open();
            await readLines(
              res,
              (text) => {
                const l = parseTextLine(text);
                if (newest && l.instance && l.ts <= newest) return;
                onLine(l);
                if (l.instance) newest = l.ts;
              },
              () => stopped,
              (c) => (cancel = c),
            );
          } catch (e) {
            if (!stopped) onError((e as Error).message);
          }
          if (!stopped) await new Promise((r) => setTimeout(r, RECONNECT_MS));
        }
      })();
      return () => {
        stopped = true;
        cancel?.();
      };
    },
  };
}

/** An agent's or function's logs: persisted history, then the live instance (across redeploys). */
export function agentLogSource(client: ApiClient, project: string, name: string): LogSource {
  return followSource(
    async () => client.request('GET', await client.pathFor(agentRoutes.logs, { name }), { query: { project, follow: 'true' }, headers: { accept: 'text/plain' }, waitSeconds: FOLLOW_WAIT_SECONDS }),
    async () => (await client.call(agentRoutes.logHistory, { params: { name }, query: { project, limit: String(HISTORY_LIMIT) } })).lines,
  );
}

/** A service's logs: the newest instance's tail, then new lines. */
export function serviceLogSource(client: ApiClient, project: string, name: string): LogSource {
  return followSource(async () =>
    client.request('GET', await client.pathFor(serverlessRoutes.logs, { projectID: project, name }), {
      query: { tail: '200', follow: 'true' },
      headers: { accept: 'text/plain' },
      waitSeconds: FOLLOW_WAIT_SECONDS,
    }),
  );
}
