import { Args, Flags } from '@oclif/core';
import type { RevisionView, ServiceView } from '../api/serverless.js';
import { secretEnvName } from '../api/serverless-sources.js';
import type { ApiClient } from '../client/api-client.js';
import { requestedSummary, shortImage, splitSummary, waitForService, type ServiceRef } from '../client/services.js';
import { startSpinner } from './spinner.js';
import type { Column } from './render.js';

/** Shared pieces of the `platform services` commands (spec 2 §2.3, §4.3). */

export const serviceArg = Args.string({ description: 'service name', required: true });

export const waitFlags = {
  wait: Flags.boolean({ description: 'wait until the new revision serves (not ready: exit 1 with the reason)', default: false }),
  'wait-timeout': Flags.integer({ description: 'with --wait: seconds before giving up', default: 300, min: 1 }),
};

/** Template and scaling flags; on update every one is optional and only those given are sent. */
export function serviceFlags(o: { update?: boolean } = {}) {
  return {
    image: Flags.string({ char: 'i', description: 'container image (a local docker image, or a registry reference)', required: !o.update }),
    env: Flags.string({
      char: 'e',
      description: o.update ? 'set a plain variable KEY=VALUE, or remove one with KEY- (repeatable)' : 'plain variable KEY=VALUE, readable by anyone who can read the service (repeatable)',
      multiple: true,
    }),
    'secret-env': Flags.string({ description: 'VAR=SECRET: the project secret read into VAR when the revision is created (repeatable)', multiple: true }),
    ...(o.update ? { 'remove-secret-env': Flags.string({ description: 'stop reading this variable (or secret) from the project secrets (repeatable)', multiple: true }) } : {}),
    command: Flags.string({ description: 'entrypoint override (the image\'s own by default)' }),
    arg: Flags.string({ description: 'argument of the entrypoint (repeatable)', multiple: true }),
    port: Flags.integer({ description: 'port the container listens on, given to it as $PORT (default 8080)', min: 1, max: 65535 }),
    h2c: Flags.boolean({ description: 'the container speaks HTTP/2 cleartext instead of HTTP/1', allowNo: !!o.update }),
    'min-scale': Flags.integer({ description: 'instances always kept (0 scales to zero when idle; default 0)', min: 0 }),
    'max-scale': Flags.integer({ description: 'instances at most (default 10)', min: 0 }),
    concurrency: Flags.integer({ description: 'in-flight requests per instance before another starts (default 80; 0 means the default)', min: 0 }),
    timeout: Flags.integer({ description: 'request timeout in seconds, 1-3600 (default 300)', min: 1, max: 3600 }),
    publish: Flags.boolean({ description: 'answer on the public address (default: private, reachable from workloads only)', allowNo: true }),
  };
}

/** The fields a person reads first, in a stable order. */
export function serviceFields(s: ServiceView): Record<string, unknown> {
  const requested = requestedSummary(s);
  const served = splitSummary(s);
  return {
    name: s.name,
    state: s.state,
    ready: s.ready,
    message: s.message,
    url: s.published ? s.url : `${s.url} (not published: answers 404; --publish opens it)`,
    internal_url: s.internal_url,
    image: s.image,
    latest_created: s.latest_created_revision,
    latest_ready: s.latest_ready_revision,
    traffic: served || '-',
    requested: requested && requested !== served ? requested : undefined,
    scaling: `${s.scaling.min_scale}-${s.scaling.max_scale} instances, ${s.scaling.container_concurrency} in flight each`,
    port: s.ports[0] ? `${s.ports[0].container_port} (${s.ports[0].name})` : undefined,
    timeout: `${s.timeout_seconds} s`,
    env: Object.keys(s.env).length ? Object.keys(s.env).join(', ') : undefined,
    secret_env: s.env_from.length ? s.env_from.map((e) => `${e.secret_name ? secretEnvName(e) : e.config_map_name} <- ${e.secret_name ?? e.config_map_name}${e.optional ? ' (optional)' : ''}`).join(', ') : undefined,
    generation: s.generation === s.observed_generation ? s.generation : `${s.generation} (applied: ${s.observed_generation})`,
    created_at: s.created_at,
  };
}

export const serviceColumns: Column<ServiceView>[] = [
  { header: 'name', get: (s) => s.name },
  { header: 'state', get: (s) => s.state },
  { header: 'ready', get: (s) => s.ready },
  { header: 'latest', get: (s) => s.latest_ready_revision },
  { header: 'traffic', get: (s) => splitSummary(s) },
  { header: 'url', get: (s) => (s.published ? s.url : 'private') },
];

export const revisionColumns: Column<RevisionView>[] = [
  { header: 'revision', get: (r) => r.name },
  { header: 'generation', get: (r) => r.generation },
  { header: 'state', get: (r) => r.state },
  { header: 'traffic', get: (r) => (r.traffic_percent || r.tag ? `${r.traffic_percent}%` : '') },
  { header: 'tag', get: (r) => r.tag },
  { header: 'instances', get: (r) => r.replicas },
  { header: 'image', get: (r) => shortImage(r.image) },
  { header: 'reason', get: (r) => [r.reason, r.message].filter(Boolean).join(': ').split('\n')[0]!.slice(0, 100) },
  { header: 'created', get: (r) => r.created_at },
];

export const trafficColumns: Column<ServiceView['active_traffic'][number]>[] = [
  { header: 'revision', get: (t) => t.revision_name },
  { header: 'percent', get: (t) => `${t.percent}%` },
  { header: 'tag', get: (t) => t.tag },
  { header: 'url', get: (t) => t.url },
];

/**
 * `--wait`: a spinner (stderr) until the revision serves; not ready ends the spinner and rethrows
 * the AbortError carrying the reason.
 */
export async function waitWithProgress(client: ApiClient, ref: ServiceRef, o: { json: boolean; timeout: number; revision?: string; split?: boolean }) {
  const spinner = startSpinner(`${ref.name}: waiting for the revision to serve`, { quiet: o.json });
  try {
    const res = await waitForService(client, ref, {
      revision: o.revision,
      split: o.split,
      timeoutMs: o.timeout * 1000,
      onState: (u) => spinner.update(`${u.revision ?? ref.name}: ${u.state}${u.message && u.state !== 'not_ready' ? ` (${u.message.split('\n')[0]!.slice(0, 80)})` : ''}`),
    });
    spinner.succeed(`${ref.name}: ${res.service.latest_ready_revision ?? 'ready'} serving`);
    return res;
  } catch (e) {
    spinner.fail(`${ref.name}: not ready`);
    throw e;
  }
}
