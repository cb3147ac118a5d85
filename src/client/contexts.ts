import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writePrivateFile } from './files.js';
import { UsageError } from './errors.js';

export const DEFAULT_LOCAL_PORT = 7070;

export interface Context {
  name: string;
  /** `local` drives the daemon this CLI spawns; `remote` a production base URL. */
  kind: 'local' | 'remote';
  url?: string;
  /** Current project (slug, short or id) for commands that need one. */
  project?: string;
  /**
   * PEM of the CA that signed a remote server's certificate (`context add --ca-cert`), embedded
   * as kubectl's `--embed-certs` does, so moving or deleting the file later breaks nothing.
   */
  ca_cert?: string;
  /**
   * Set by `platform logout` on the local context, cleared by `platform login`: while set, the
   * local context does not sign itself in again (PLATFORM_ADMIN_PASSWORD, an old keys/admin.json),
   * so a signed-out CLI never acts as the admin behind the person's back.
   */
  signed_out?: boolean;
}

interface ContextFile {
  current: string;
  contexts: Context[];
}

export const platformHome = () => process.env.PLATFORM_HOME || join(homedir(), '.platform');
const contextFile = () => join(platformHome(), 'contexts.json');

const LOCAL: Context = { name: 'local', kind: 'local' };

/** Contexts live in the state directory beside the daemon's files; `local` always exists. */
export function readContexts(): ContextFile {
  const file = contextFile();
  if (!existsSync(file)) return { current: 'local', contexts: [LOCAL] };
  const data = JSON.parse(readFileSync(file, 'utf8')) as ContextFile;
  if (!data.contexts.some((c) => c.name === 'local')) data.contexts.unshift(LOCAL);
  return data;
}

export function writeContexts(data: ContextFile): void {
  mkdirSync(dirname(contextFile()), { recursive: true });
  writePrivateFile(contextFile(), JSON.stringify(data, null, 2) + '\n');
}

export function getContext(name?: string): Context {
  const data = readContexts();
  const wanted = name ?? process.env.PLATFORM_CONTEXT ?? data.current;
  const ctx = data.contexts.find((c) => c.name === wanted);
  if (!ctx) throw new UsageError(`no context named ${wanted}`, 'run `platform context list` to see the contexts');
  return ctx;
}

export function updateContext(name: string, change: (c: Context) => void): Context {
  const data = readContexts();
  const ctx = data.contexts.find((c) => c.name === name);
  if (!ctx) throw new UsageError(`no context named ${name}`, 'run `platform context list` to see the contexts');
  change(ctx);
  writeContexts(data);
  return ctx;
}

/** Records that the person signed out of a context (true) or signed in again (false). */
export function setSignedOut(name: string, signedOut: boolean): void {
  if (Boolean(getContext(name).signed_out) === signedOut) return;
  updateContext(name, (c) => {
    if (signedOut) c.signed_out = true;
    else delete c.signed_out;
  });
}
