import { PORT_DEFAULT, RESOURCES_DEFAULT, secretEnvName, TIMEOUT_ENV } from '../../../api/serverless.js';
import { parseBytes } from '../../../api/quantity.js';
import type { AreaContext } from '../../area.js';
import { proxiedReservation, type Reservation } from '../accounts/quota-use.js';
import { openText, sealText } from '../../crypto/sealed.js';
import { badRequest, unavailable } from '../../http/errors.js';
import type { RevisionTemplate } from './plane.js';
import type { RevisionRow, ServiceRow, StoredSpec, Template } from './store.js';
import { parseCpu } from './validate.js';

/** Revisions are named <service>-<5-digit sequence> (spec 2 §9). */
export const revisionName = (service: string, seq: number) => `${service}-${String(seq).padStart(5, '0')}`;

/** The template fields of a spec, in a fixed key order so equal templates serialize equally. */
export function templateOf(spec: StoredSpec): Template {
  return {
    image: spec.image,
    ...(spec.command !== undefined ? { command: spec.command } : {}),
    ...(spec.args !== undefined ? { args: spec.args } : {}),
    env: Object.fromEntries(Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    env_from: spec.env_from,
    ports: spec.ports,
    resources: spec.resources,
    timeout_seconds: spec.timeout_seconds,
    runtime_class_name: spec.runtime_class_name,
  };
}

/**
 * Reads env_from from the project's secrets now (spec 2 §4.3: a secret changed later needs a new
 * revision). A missing secret is a 400 unless the entry is optional; config maps do not exist
 * on this platform, so only optional ones are accepted (and contribute nothing).
 */
export function readEnvFrom(ctx: AreaContext, projectId: string, envFrom: Template['env_from']): Record<string, string> {
  const out: Record<string, string> = {};
  envFrom.forEach((e, i) => {
    if (e.config_map_name) {
      if (!e.optional) throw badRequest(`rejected by the platform: env_from[${i}]: config map ${e.config_map_name} not found (this platform has no config maps; mark it optional or use a secret)`);
      return;
    }
    const read = ctx.hooks.projectSecretValue;
    if (!read) throw unavailable('env_from: the project secret store is not available in this daemon');
    const value = read(projectId, e.secret_name!);
    if (value === undefined) {
      if (e.optional) return;
      throw badRequest(`rejected by the platform: env_from[${i}]: secret ${e.secret_name} not found in this project`);
    }
    out[secretEnvName(e)] = value;
  });
  return out;
}

const aad = (serviceId: string, revision: string) => `serverless-revision:${serviceId}:${revision}`;

/** Values from secrets are sealed at rest under the daemon's master key, never returned by any route. */
export function sealSecretEnv(ctx: AreaContext, serviceId: string, revision: string, values: Record<string, string>): string {
  return Object.keys(values).length ? sealText(ctx.db, JSON.stringify(values), aad(serviceId, revision)) : '';
}

export function openSecretEnv(ctx: AreaContext, r: RevisionRow): Record<string, string> {
  return r.secret_env ? (JSON.parse(openText(ctx.db, r.secret_env, aad(r.service_id, r.name))) as Record<string, string>) : {};
}

/** Equal secret values compare equal whatever their order. */
export const sameValues = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** CPUs and memory an instance runs with: the limits, else the requests, else the defaults (spec 1 §8.4: memory is both). */
export function instanceSize(t: Template): { cpus: number; memoryBytes: number } {
  const r = t.resources;
  const cpu = r.limits?.cpu ?? r.requests?.cpu ?? RESOURCES_DEFAULT.limits.cpu;
  const mem = r.limits?.memory ?? r.requests?.memory ?? RESOURCES_DEFAULT.limits.memory;
  return { cpus: parseCpu(cpu) ?? 1, memoryBytes: parseBytes(mem) ?? 512 * 1024 ** 2 };
}

/**
 * What one instance of a revision holds against the CPU and memory quotas (spec 1 §8.3, §8.4): its
 * ceiling as above, the requests it states (else §8.4's reservation), and the proxy in front of it.
 */
export function instanceReservation(t: Template): Reservation {
  const req = t.resources.requests;
  const cpus = req?.cpu === undefined ? undefined : parseCpu(req.cpu);
  const memoryBytes = req?.memory === undefined ? undefined : parseBytes(req.memory);
  return proxiedReservation(instanceSize(t), { ...(cpus === undefined ? {} : { cpus }), ...(memoryBytes === undefined ? {} : { memoryBytes }) });
}

/** What the data plane runs for one revision: plain env, then the secret values, then the timeout mirror. */
export function runTemplate(ctx: AreaContext, s: ServiceRow, short: string, r: RevisionRow): RevisionTemplate {
  const t = JSON.parse(r.template) as Template;
  return {
    serviceId: s.id,
    projectId: s.project_id,
    projectShort: short,
    service: s.name,
    revision: r.name,
    generation: r.generation,
    image: t.image,
    ...(t.command !== undefined ? { command: t.command } : {}),
    ...(t.args !== undefined ? { args: t.args } : {}),
    env: { ...t.env, ...openSecretEnv(ctx, r), [TIMEOUT_ENV]: String(t.timeout_seconds) },
    port: t.ports[0]?.container_port ?? PORT_DEFAULT,
    ...instanceSize(t),
    timeoutSeconds: t.timeout_seconds,
  };
}
