import { startSpinner, type Spinner } from '../cli/spinner.js';
import type { AgentView } from '../api/agents.js';
import type { DeployOutcome, Trigger } from './deploy-loop.js';
import type { WorkloadLogLine } from './log-stream.js';
import { HOTKEYS } from './hotkeys.js';

export interface Addresses {
  name: string;
  /** The API's invoke route on the daemon the CLI talks to. */
  invokeUrl: string;
  /** The workload's own address (Host-routed by the daemon; empty when the server hands out none). */
  publicUrl: string;
}

/** What `platform dev` shows; one implementation per audience (a person, a program reading --json). */
export interface DevOutput {
  addresses(a: Addresses, watching: { dir: string; hotkeys: boolean }): void;
  deploying(trigger: Trigger): void;
  state(agent: AgentView): void;
  buildOutput(chunk: string): void;
  done(outcome: DeployOutcome, trigger: Trigger): void;
  revision(revision: string): void;
  log(line: WorkloadLogLine): void;
  invoked(from: string, result: { ok: true; response: unknown } | { ok: false; error: string }): void;
  opened(url: string, command: string | undefined): void;
  note(text: string): void;
  clear(): void;
  stopped(): void;
}

/** Lines of a failure shown under it: where compilers and tracebacks put the cause. */
export const ERROR_TAIL_LINES = 12;

const RUNTIME_FRAME = /^\s+at (?:async )?(?:.*\()?node:internal\//;

/**
 * The failure's first line (the daemon's headline: which step failed and why) and its last
 * lines (where compilers and tracebacks put the cause), the middle left out.
 */
export function errorTail(text: string, lines = ERROR_TAIL_LINES): string[] {
  // Frames inside Node's own loader say nothing about the author's code and would push the
  // file and line of a syntax error out of the tail.
  const all = text.trimEnd().split('\n').filter((l) => !RUNTIME_FRAME.test(l));
  if (all.length <= lines) return all;
  return [all[0]!, `… (${all.length - lines + 1} lines left out)`, ...all.slice(-(lines - 2))];
}

const triggerText = (t: Trigger) => (t.kind === 'save' ? `${t.path} changed` : t.kind === 'key' ? 'redeploy' : 'first deploy');
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/**
 * For a person: one line per deploy (a spinner while it runs on a terminal), the failure's tail,
 * log lines under a marker naming their revision, invoke answers. Everything goes to `out`
 * (stdout), the spinner too, so a log line never lands in the middle of the spinner's line.
 */
export function humanOutput(out: NodeJS.WriteStream, opts: { name: string; verbose: boolean; bin: string; project?: string }): DevOutput {
  let spinner: Spinner | undefined;
  const name = opts.name;
  let phase = '';
  const line = (text: string) => (spinner ? spinner.note(text) : out.write(`${text}\n`));
  const time = (ts: string) => ts.slice(11, 19);
  return {
    addresses(a, watching) {
      line(`  invoke: POST ${a.invokeUrl}   (or: ${opts.bin} invoke ${a.name} --data '{"message":"hi"}')`);
      line(a.publicUrl ? `  public: ${a.publicUrl}` : `  public: none: this server hands out no workload addresses; publish one with \`${opts.bin} gateway\``);
      line(`  watching ${watching.dir} (not .git, node_modules, virtual environments, what .gitignore leaves out)`);
      if (watching.hotkeys) line(`  keys: ${HOTKEYS.map(([k, what]) => `${k} ${what}`).join(' · ')}`);
    },
    deploying(trigger) {
      phase = `${name}: ${triggerText(trigger)}, deploying`;
      if (opts.verbose) line(phase);
      else spinner = startSpinner(phase, { stream: out, quiet: !out.isTTY });
    },
    state(agent) {
      phase = `${agent.name}: ${agent.state}`;
      if (opts.verbose) line(phase);
      else spinner?.update(phase);
    },
    buildOutput(chunk) {
      if (opts.verbose) out.write(chunk);
    },
    done(outcome, trigger) {
      const s = spinner;
      spinner = undefined;
      if (outcome.ok) {
        const text = `${outcome.agent.name}: ${outcome.revision} serving`;
        const save = outcome.sinceSaveMs !== undefined && trigger.kind === 'save' ? `, ${seconds(outcome.sinceSaveMs)} after saving ${trigger.path}` : '';
        // The spinner adds its own elapsed time.
        if (s && out.isTTY) s.succeed(`${text}${save ? ` (deployed${save})` : ''}`);
        else out.write(`✓ ${text} (${seconds(outcome.ms)}${save})\n`);
        return;
      }
      const headline = outcome.revision
        ? `${outcome.revision} failed; ${outcome.serving ? `${outcome.serving} keeps serving` : 'nothing serves yet'}`
        : `${triggerText(trigger)}: deploy failed`;
      if (s && out.isTTY) s.fail(headline);
      else out.write(`✗ ${headline}\n`);
      for (const l of errorTail(outcome.error)) out.write(`  │ ${l}\n`);
      if (outcome.revision) {
        out.write(`  the whole build log: ${opts.bin} logs ${name} --build --revision ${outcome.revision}${opts.project ? ` -p ${opts.project}` : ''}; fix and save to deploy again\n`);
      }
    },
    revision(revision) {
      line(`── ${revision} ${'─'.repeat(Math.max(4, 40 - revision.length))}`);
    },
    log(l) {
      const text = l.stream === 'stdout' ? l.message : `${l.stream}: ${l.message}`;
      line(`${time(l.ts)}  ${text}`);
    },
    invoked(from, result) {
      if (result.ok) line(`invoke with ${from} →\n${typeof result.response === 'string' ? result.response : JSON.stringify(result.response, null, 2)}`);
      else line(`invoke with ${from} failed: ${result.error}`);
    },
    opened(url, command) {
      line(command ? `opened ${url} (${command})` : `no browser to open (set BROWSER): ${url}`);
    },
    note(text) {
      line(text);
    },
    clear() {
      out.write('\x1b[2J\x1b[3J\x1b[H');
    },
    stopped() {
      spinner?.fail('quit while deploying');
      spinner = undefined;
    },
  };
}

/**
 * For programs (--json): one JSON object per line on stdout, `event` naming it: `addresses`,
 * `deploying`, `deployed`, `failed`, `log`, `invoked`, `opened`, `stopped`. Build output under
 * --verbose goes to stderr, so stdout stays parseable.
 */
export function jsonOutput(out: NodeJS.WriteStream, opts: { name: string; verbose: boolean }): DevOutput {
  const emit = (event: string, fields: Record<string, unknown>) => out.write(`${JSON.stringify({ event, at: new Date().toISOString(), ...fields })}\n`);
  const trig = (t: Trigger) => (t.kind === 'save' ? { trigger: 'save', path: t.path } : { trigger: t.kind });
  return {
    addresses: (a, w) => emit('addresses', { name: a.name, invoke_url: a.invokeUrl, public_url: a.publicUrl, dir: w.dir }),
    deploying: (t) => emit('deploying', trig(t)),
    state: () => undefined,
    buildOutput: (chunk) => (opts.verbose ? void process.stderr.write(chunk) : undefined),
    done(o, t) {
      if (o.ok) emit('deployed', { ...trig(t), name: opts.name, revision: o.revision, ms: o.ms, ...(o.sinceSaveMs !== undefined ? { since_save_ms: o.sinceSaveMs } : {}) });
      else emit('failed', { ...trig(t), name: opts.name, ...(o.revision ? { revision: o.revision } : {}), ...(o.serving ? { serving_revision: o.serving } : {}), error: o.error, ms: o.ms });
    },
    revision: () => undefined,
    log: (l) => emit('log', { ...l }),
    invoked: (from, r) => emit('invoked', { payload_from: from, ...(r.ok ? { response: r.response } : { error: r.error }) }),
    opened: (url, command) => emit('opened', { url, ...(command ? { command } : {}) }),
    note: (text) => void process.stderr.write(`${text}\n`),
    clear: () => undefined,
    stopped: () => emit('stopped', {}),
  };
}
