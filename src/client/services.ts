import { existsSync, readdirSync, statSync } from 'node:fs';
import { SERVER_ENTRIES } from '../api/serverless-sources.js';
import {
  SOURCE_IMAGE_PREFIX,
  serverlessRoutes,
  type RevisionView,
  type ServiceCreateBody,
  type ServicePatchBody,
  type ServiceView,
  type TrafficTarget,
  type EnvFrom,
} from '../api/serverless.js';
import type { ApiClient } from './api-client.js';
import { AbortError, ApiCallError, UsageError } from './errors.js';
import { packDirectory } from './pack.js';

/**
 * The CLI side of serverless services (spec 2 §2.3, §4.3): request bodies from flags, the traffic
 * split from `--to`/`--tag`, source uploads, waiting until a revision serves. Nothing here knows
 * oclif; commands render what it returns.
 */

export interface ServiceRef {
  projectID: string;
  name: string;
}

/** What a failed call should make the user do next, instead of the bare API message. */
export function explain(err: unknown, ref: { name?: string; revision?: string }): never {
  if (!(err instanceof ApiCallError)) throw err;
  const s = ref.name ?? 'NAME';
  const m = err.message.toLowerCase();
  let next = err.next;
  if (err.status === 404) {
    if (/project/.test(m)) next = 'check --project (`platform projects list`)';
    else next = 'list the services with `platform services list` (or check --project)';
  } else if (err.status === 403) {
    next = 'deleting a service needs a project admin: ask one, or check your role with `platform members list`';
  } else if (err.status === 409) {
    if (/exist/.test(m)) next = `choose another name, or change it with \`platform services update ${s} ...\``;
    else next = `the service changed while this command ran; look at it with \`platform services get ${s}\` and run the command again`;
  } else if (err.status === 413) {
    next = 'the request is too large (services take 256 KiB of settings); move large values into project secrets (`--secret-env`)';
  } else if (err.status === 400) {
    const secret = /secret (\S+) not found/.exec(err.message);
    if (secret) next = `create it with \`platform secrets set ${secret[1]}\` (the value is read from stdin or a prompt)`;
    else if (/revision/.test(m)) next = `the revisions are listed by \`platform services revisions ${s}\``;
    else if (/traffic|percent|tag/.test(m)) next = 'give the whole split, summing to 100: e.g. `--to latest=100`, or `--to NAME-00001=50 --to latest=50`';
    else if (/scale/.test(m)) next = 'scales are 0 or more and --min-scale is at most --max-scale';
    else if (/name/.test(m)) next = 'a name is 1-52 lowercase letters, digits and hyphens, starting with a letter';
  } else if (err.status === 503) {
    next = 'the daemon cannot use its database right now; check `platform daemon status` and try again';
  }
  throw new ApiCallError(err.status, err.message, err.requestId, err.body, next);
}

/** Wraps a call so every failure carries a next step. */
export async function call<T>(p: Promise<T>, ref: { name?: string; revision?: string }): Promise<T> {
  try {
    return await p;
  } catch (e) {
    explain(e, ref);
  }
}

/** Parses KEY=VALUE items (the value may contain '='); `KEY-` (kn's syntax) removes KEY on update. */
export function parseEnv(items: string[] = [], opts: { allowRemove?: boolean } = {}): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const item of items) {
    const i = item.indexOf('=');
    if (i < 0 && opts.allowRemove && item.endsWith('-') && item.length > 1) {
      remove.push(item.slice(0, -1));
      continue;
    }
    if (i <= 0) throw new UsageError(`--env ${item} is not KEY=VALUE`, opts.allowRemove ? 'e.g. --env MODE=prod (or --env MODE- to remove it)' : 'e.g. --env MODE=prod');
    set[item.slice(0, i)] = item.slice(i + 1);
  }
  return { set, remove };
}

/**
 * `--secret-env VAR=secret` reads the project secret into VAR when the revision is created;
 * a bare `secret` lands in the variable the daemon derives from its name.
 */
export function parseSecretEnv(items: string[] = []): EnvFrom[] {
  return items.map((item) => {
    const i = item.indexOf('=');
    if (i === 0 || i === item.length - 1) throw new UsageError(`--secret-env ${item} is not VAR=SECRET`, 'e.g. --secret-env DATABASE_URL=db-url (create the secret with `platform secrets create`)');
    return i < 0 ? { secret_name: item } : { env_name: item.slice(0, i), secret_name: item.slice(i + 1) };
  });
}

/** The template and scaling flags shared by create, update and deploy. */
export interface ServiceFlags {
  image?: string;
  env?: string[];
  'secret-env'?: string[];
  command?: string;
  arg?: string[];
  port?: number;
  h2c?: boolean;
  'min-scale'?: number;
  'max-scale'?: number;
  concurrency?: number;
  timeout?: number;
  publish?: boolean;
}

/** A create body: only what the flags say; the daemon fills the spec's defaults. */
export function createBody(name: string, f: ServiceFlags): ServiceCreateBody {
  const body: ServiceCreateBody = { name, image: f.image };
  const env = parseEnv(f.env).set;
  if (Object.keys(env).length) body.env = env;
  const envFrom = parseSecretEnv(f['secret-env']);
  if (envFrom.length) body.env_from = envFrom;
  Object.assign(body, templateFields(f));
  const scaling = scalingFields(f);
  if (scaling) body.scaling = scaling;
  if (f.publish !== undefined) body.publish = { enabled: f.publish };
  return body;
}

function templateFields(f: ServiceFlags): Partial<ServicePatchBody> {
  const out: Partial<ServicePatchBody> = {};
  if (f.command !== undefined) out.command = f.command === '' ? [] : [f.command];
  if (f.arg !== undefined) out.args = f.arg;
  if (f.port !== undefined || f.h2c !== undefined) out.ports = [{ ...(f.h2c ? { name: 'h2c' as const } : { name: 'http1' as const }), ...(f.port !== undefined ? { container_port: f.port } : {}) }];
  if (f.timeout !== undefined) out.timeout_seconds = f.timeout;
  return out;
}

function scalingFields(f: ServiceFlags): ServiceCreateBody['scaling'] | undefined {
  const s: NonNullable<ServiceCreateBody['scaling']> = {};
  if (f['min-scale'] !== undefined) s.min_scale = f['min-scale'];
  if (f['max-scale'] !== undefined) s.max_scale = f['max-scale'];
  if (f.concurrency !== undefined) s.container_concurrency = f.concurrency;
  return Object.keys(s).length ? s : undefined;
}

/**
 * A sparse patch: only the flags given. --env and --secret-env change single variables of the
 * current service (like `kn service update --env`), so the whole map is sent with those changes.
 */
export function patchBody(current: ServiceView, f: ServiceFlags & { 'remove-secret-env'?: string[] }): ServicePatchBody {
  const body: ServicePatchBody = {};
  if (f.image !== undefined) body.image = f.image;
  if (f.env?.length) {
    const { set, remove } = parseEnv(f.env, { allowRemove: true });
    const env = { ...current.env, ...set };
    for (const k of remove) delete env[k];
    body.env = env;
  }
  if (f['secret-env']?.length || f['remove-secret-env']?.length) {
    const added = parseSecretEnv(f['secret-env']);
    const variable = (e: EnvFrom) => e.env_name ?? e.secret_name ?? e.config_map_name;
    const drop = new Set([...added.map(variable), ...(f['remove-secret-env'] ?? [])]);
    body.env_from = [...current.env_from.filter((e) => !drop.has(variable(e)) && !drop.has(e.secret_name)), ...added];
  }
  Object.assign(body, templateFields(f));
  // --port or --h2c alone keeps the other half of the current port.
  if (body.ports) {
    const now = current.ports[0];
    body.ports = [{ name: f.h2c === undefined ? ((now?.name as 'h2c' | 'http1' | undefined) ?? 'http1') : f.h2c ? 'h2c' : 'http1', ...(f.port ?? now?.container_port ? { container_port: f.port ?? now?.container_port } : {}) }];
  }
  const scaling = scalingFields(f);
  if (scaling) body.scaling = scaling;
  if (f.publish !== undefined) body.publish = { enabled: f.publish };
  return body;
}

/** `2`, `00002` or the full name: a revision of `service`. */
export function revisionName(service: string, ref: string): string {
  if (/^\d{1,5}$/.test(ref)) return `${service}-${ref.padStart(5, '0')}`;
  return ref;
}

/**
 * The whole split from `--to REV=PERCENT` (REV: `latest`, a revision name or its number) and
 * `--tag REV=TAG`; a tag on a revision outside the split adds it at 0 percent (an address only).
 */
export function trafficFrom(service: string, to: string[] = [], tags: string[] = []): TrafficTarget[] {
  const targets: TrafficTarget[] = [];
  const keyOf = (ref: string) => (ref === 'latest' || ref === '@latest' ? 'latest' : revisionName(service, ref));
  const find = (key: string) => targets.find((t) => (key === 'latest' ? t.latest_revision : t.revision_name === key));
  for (const item of to) {
    const m = /^(.+)=(\d+)%?$/.exec(item);
    if (!m) throw new UsageError(`--to ${item} is not REVISION=PERCENT`, 'e.g. --to latest=100, or --to 1=50 --to latest=50');
    const key = keyOf(m[1]!);
    if (find(key)) throw new UsageError(`--to names ${key} twice`, 'give each revision once');
    targets.push(key === 'latest' ? { latest_revision: true, percent: Number(m[2]) } : { revision_name: key, percent: Number(m[2]) });
  }
  for (const item of tags) {
    const i = item.indexOf('=');
    if (i <= 0 || i === item.length - 1) throw new UsageError(`--tag ${item} is not REVISION=TAG`, 'e.g. --tag 2=blue (the tag gets its own address)');
    const key = keyOf(item.slice(0, i));
    const target = find(key);
    if (target) target.tag = item.slice(i + 1);
    else targets.push({ ...(key === 'latest' ? { latest_revision: true } : { revision_name: key }), percent: 0, tag: item.slice(i + 1) });
  }
  if (!targets.length) throw new UsageError('give the split with --to', 'e.g. --to latest=100, or --to 1=50 --to latest=50');
  const sum = targets.reduce((a, t) => a + (t.percent ?? 0), 0);
  if (sum !== 100) throw new UsageError(`the split sums to ${sum} percent, not 100`, 'give every target with --to, e.g. --to 1=20 --to latest=80');
  return targets;
}

/** `web-00002 50% (blue), latest 50%`: the served split on one line. */
export function splitSummary(s: Pick<ServiceView, 'active_traffic'>): string {
  if (!s.active_traffic.length) return '';
  return s.active_traffic
    .filter((t) => t.percent > 0 || t.tag)
    .map((t) => `${t.revision_name} ${t.percent}%${t.tag ? ` (${t.tag})` : ''}`)
    .join(', ');
}

/** The split as requested, for when it differs from what is served. */
export function requestedSummary(s: Pick<ServiceView, 'traffic'>): string {
  return s.traffic.map((t) => `${t.latest_revision ? 'latest' : t.revision_name} ${t.percent ?? 0}%${t.tag ? ` (${t.tag})` : ''}`).join(', ');
}

// ---- source folders (`platform services deploy DIR`) ----

export const SOURCE_RUNTIMES = SERVER_ENTRIES.map((e) => e.runtime);

/**
 * Which runtime a folder runs as, checked before anything is uploaded. The daemon decides from
 * the same files in the same order; --runtime only makes the CLI insist on one.
 */
export function detectServer(dir: string, runtime?: string): { runtime: string; by: string } {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a folder`, 'pass the folder holding the server, e.g. `platform services deploy ./web`');
  const names = readdirSync(dir);
  const candidates = SERVER_ENTRIES.filter((e) => !runtime || e.runtime === runtime);
  for (const e of SERVER_ENTRIES) {
    const by = e.found(names);
    if (!by) continue;
    if (candidates.includes(e)) return { runtime: e.runtime, by };
    throw new AbortError(
      `${dir} holds ${by}, so it runs as ${e.runtime}, not ${runtime}`,
      `drop --runtime, or remove ${by} from the folder (the daemon looks for go, then nodejs, python and ruby)`,
    );
  }
  const looked = candidates.map((e) => `${e.looksFor} (${e.runtime})`).join(', ');
  throw new AbortError(
    `${dir} has no server to start (looked for ${looked})`,
    'a service folder is its own web server listening on $PORT, e.g. main.py for python; or run an image with `platform services create NAME --image IMAGE`',
  );
}

/** Packs the folder (honouring .gitignore and .platformignore) and uploads it; returns its image reference. */
export async function uploadSource(client: ApiClient, projectID: string, dir: string): Promise<{ image: string; files: number; skipped: string[]; bytes: number }> {
  const packed = await packDirectory(dir);
  if (!packed.files.length) throw new AbortError(`nothing to deploy in ${dir}`, 'every file is ignored (.gitignore, .platformignore) or the folder is empty');
  const path = await client.pathFor(serverlessRoutes.sources, { projectID });
  try {
    const res = await client.request('POST', path, { rawBody: new Uint8Array(packed.archive), headers: { 'content-type': 'application/gzip' } });
    const body = (await res.json()) as { image: string };
    return { image: body.image, files: packed.files.length, skipped: packed.skipped, bytes: packed.archive.length };
  } catch (e) {
    if (e instanceof ApiCallError && e.status === 413) throw new ApiCallError(413, e.message, e.requestId, e.body, 'the packed folder is too large; leave build output and dependencies out with a .platformignore');
    explain(e, {});
  }
}

// ---- waiting ----

export interface WaitUpdate {
  state: string;
  revision?: string;
  message?: string;
}

export interface WaitOptions {
  /** The revision that must serve; default the service's latest created revision. */
  revision?: string;
  /** A split change: wait until the service applied it and serves, whatever revision is newest. */
  split?: boolean;
  onState?: (u: WaitUpdate) => void;
  pollMs?: number;
  timeoutMs?: number;
}

/**
 * Polls until the service serves its latest created revision (or `revision`) and has applied
 * its generation. A revision that is not_ready, or an invalid service, becomes an AbortError with
 * the reason; traffic stays where it was, which the error says.
 */
export async function waitForService(client: ApiClient, ref: ServiceRef, o: WaitOptions = {}): Promise<{ service: ServiceView; revisions: RevisionView[] }> {
  const deadline = Date.now() + (o.timeoutMs ?? 300_000);
  const params = { projectID: ref.projectID, name: ref.name };
  let last = '';
  for (;;) {
    const [service, revisions] = await Promise.all([
      call(client.call(serverlessRoutes.get, { params }), ref),
      call(client.call(serverlessRoutes.revisions, { params }), ref).then((r) => r.revisions),
    ]);
    const wanted = o.revision ?? service.latest_created_revision;
    const rev = revisions.find((r) => r.name === wanted);
    const message = rev?.message ?? service.message;
    const seen = `${service.state}\n${rev?.state}\n${message ?? ''}`;
    if (seen !== last) o.onState?.({ state: rev && rev.state !== 'unknown' ? rev.state : service.state, revision: wanted, message });
    last = seen;
    const serving = o.split || service.latest_ready_revision === wanted || (rev?.ready ?? false);
    if (service.ready && serving && service.observed_generation >= service.generation) return { service, revisions };
    const failed = (!o.split && rev?.state === 'not_ready') || service.state === 'invalid' || (service.state === 'not_ready' && rev?.state !== 'unknown');
    if (failed) {
      const keeps = service.latest_ready_revision && service.latest_ready_revision !== wanted ? `; traffic stays on ${service.latest_ready_revision}` : '';
      throw new AbortError(
        `${ref.name} revision ${wanted} is not ready${keeps}:\n${[rev?.reason, message].filter(Boolean).join(': ') || '(no message)'}`,
        service.image.startsWith(SOURCE_IMAGE_PREFIX)
          ? `fix the folder and deploy it again (\`platform services deploy DIR --name ${ref.name}\`); each revision's state: \`platform services revisions ${ref.name}\``
          : `fix the image or its settings and update the service (\`platform services update ${ref.name} --image ...\`); each revision's state: \`platform services revisions ${ref.name}\``,
      );
    }
    if (Date.now() > deadline) {
      throw new AbortError(`${ref.name} revision ${wanted} is still ${rev?.state ?? service.state} after ${Math.round((o.timeoutMs ?? 300_000) / 1000)} s`, `check it with \`platform services get ${ref.name}\``);
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 150));
  }
}

/** A source reference or a digest shortened for a table: `source:sha256-672d79f4be34`, `img@sha256:0a1b2c3d4e5f`. */
export function shortImage(image: string): string {
  if (image.startsWith(SOURCE_IMAGE_PREFIX)) return image.replace(/^.*\/(sha256-[0-9a-f]{12})[0-9a-f]*$/, 'source:$1');
  return image.replace(/(sha256:[0-9a-f]{12})[0-9a-f]*$/, '$1');
}
