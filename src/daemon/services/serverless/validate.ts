import { ENV_NAME_RE } from '../../../api/secrets.js';
import {
  RESERVED_SERVICE_NAMES,
  SERVICE_NAME_MAX,
  SERVICE_NAME_RE,
  SOURCE_IMAGE_PREFIX,
  SOURCE_IMAGE_RE,
  TIMEOUT_MAX,
  type Resources,
  type ScalingInput,
} from '../../../api/serverless.js';
import { parseBytes } from '../../../api/quantity.js';
import { badRequest } from '../../http/errors.js';

/**
 * Rules of spec 2 §4.3 whose wording the spec fixes (invalid name, image required, the traffic
 * and scaling validations). Pure functions: the caller decides what exists.
 */

export function checkName(name: string | undefined): string {
  if (name === undefined || name === '') throw badRequest('invalid name: name is required');
  if (name.length > SERVICE_NAME_MAX || !SERVICE_NAME_RE.test(name)) {
    throw badRequest(
      `invalid name ${JSON.stringify(name.slice(0, 80))}: must be 1 to ${SERVICE_NAME_MAX} lowercase letters, digits or hyphens, start with a letter and end with a letter or digit`,
    );
  }
  if ((RESERVED_SERVICE_NAMES as readonly string[]).includes(name)) throw badRequest(`invalid name ${JSON.stringify(name)}: the name is reserved`);
  return name;
}

/** A docker reference: [host[:port]/]path[:tag][@sha256:digest], lowercase path components. */
const IMAGE_RE =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d{1,5})?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$/;

/** Image rule: required on create; a docker reference or a source reference (checked for existence by the caller). */
export function checkImage(image: string | undefined): string {
  if (image === undefined || image.trim() === '') throw badRequest('image required: set image to a container image reference (or upload a source folder with services deploy)');
  if (image.startsWith(SOURCE_IMAGE_PREFIX)) {
    if (!SOURCE_IMAGE_RE.test(image)) throw badRequest(`rejected by the platform: image ${JSON.stringify(image)} is not a source reference of the form source.platform.local/<short>/sha256-<hex>`);
    return image;
  }
  if (image.length > 512 || !IMAGE_RE.test(image)) throw badRequest(`rejected by the platform: image ${JSON.stringify(image.slice(0, 120))} is not a valid image reference`);
  return image;
}

export function checkEnv(env: Record<string, string> | undefined): void {
  for (const k of Object.keys(env ?? {})) {
    if (!ENV_NAME_RE.test(k)) throw badRequest(`invalid env name ${JSON.stringify(k)}: must match ^[A-Za-z_][A-Za-z0-9_]*$`);
  }
}

export function checkPorts(ports: Array<{ name?: string; container_port?: number }> | undefined): Array<{ name: string; container_port: number }> | undefined {
  if (ports === undefined) return undefined;
  if (ports.length > 1) throw badRequest('ports: at most one port may be set');
  return ports.map((p) => ({ name: p.name ?? 'http1', container_port: p.container_port ?? 8080 }));
}

/** Kubernetes CPU quantity ("250m", "1", "0.5") in cores; undefined when not one. */
export function parseCpu(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(text.trim());
  if (!m) return undefined;
  const cores = m[2] ? Number(m[1]) / 1000 : Number(m[1]);
  return cores > 0 ? cores : undefined;
}

/** Spec 1 §8.4: the largest instance size (xlarge) is 4 CPU and 4 GiB. */
export const MAX_CPU = 4;
export const MAX_MEMORY = 4 * 1024 ** 3;

export function checkResources(r: Resources | undefined): void {
  if (!r) return;
  const amounts: Array<[string, { cpu?: string; memory?: string } | undefined]> = [
    ['requests', r.requests],
    ['limits', r.limits],
  ];
  const parsed: Record<string, { cpu?: number; memory?: number }> = {};
  for (const [k, a] of amounts) {
    parsed[k] = {};
    if (a?.cpu !== undefined) {
      const c = parseCpu(a.cpu);
      if (c === undefined) throw badRequest(`resources.${k}.cpu: ${JSON.stringify(a.cpu)} is not a CPU quantity (use for example 250m or 1)`);
      if (c > MAX_CPU) throw badRequest(`resources.${k}.cpu: at most ${MAX_CPU} CPUs (the xlarge instance size)`);
      parsed[k]!.cpu = c;
    }
    if (a?.memory !== undefined) {
      const m = parseBytes(a.memory);
      if (m === undefined) throw badRequest(`resources.${k}.memory: ${JSON.stringify(a.memory)} is not a memory quantity (use for example 512Mi or 1Gi)`);
      if (m > MAX_MEMORY) throw badRequest(`resources.${k}.memory: at most 4Gi (the xlarge instance size)`);
      parsed[k]!.memory = m;
    }
  }
  const { requests, limits } = parsed as { requests: { cpu?: number; memory?: number }; limits: { cpu?: number; memory?: number } };
  if (requests.cpu !== undefined && limits.cpu !== undefined && requests.cpu > limits.cpu) throw badRequest('resources: requests.cpu must not exceed limits.cpu');
  if (requests.memory !== undefined && limits.memory !== undefined && requests.memory > limits.memory) throw badRequest('resources: requests.memory must not exceed limits.memory');
}

/** timeout_seconds: 1 to 3600; above the maximum is clamped like every request timeout (spec 1 §8.5). */
export function checkTimeout(t: number | undefined): number | undefined {
  if (t === undefined) return undefined;
  if (t < 1) throw badRequest(`timeout_seconds must be between 1 and ${TIMEOUT_MAX}`);
  return Math.min(t, TIMEOUT_MAX);
}

/** Knative's container concurrency ceiling. */
export const MAX_CONCURRENCY = 1000;

/** Scaling validation on the merged values (spec 2 §4.3: negative values, min_scale above max_scale). */
export function checkScaling(s: { min_scale: number; max_scale: number; container_concurrency: number }): void {
  for (const k of ['min_scale', 'max_scale', 'container_concurrency'] as const) {
    if (s[k] < 0) throw badRequest(`scaling validation: scaling.${k} must not be negative (got ${s[k]})`);
  }
  if (s.container_concurrency > MAX_CONCURRENCY) throw badRequest(`scaling validation: scaling.container_concurrency must be at most ${MAX_CONCURRENCY}`);
  const max = effectiveMaxScale(s.max_scale);
  if (s.min_scale > max) throw badRequest(`scaling validation: scaling.min_scale (${s.min_scale}) is above max_scale (${max})`);
}

/** Spec 2 §4.3: max_scale 0 behaves as 10; container_concurrency 0 means the default 80. */
export const effectiveMaxScale = (n: number) => (n <= 0 ? 10 : n);
export const effectiveConcurrency = (n: number) => (n <= 0 ? 80 : n);

export const mergeScaling = (cur: { min_scale: number; max_scale: number; container_concurrency: number }, patch: ScalingInput | undefined) => ({
  min_scale: patch?.min_scale ?? cur.min_scale,
  max_scale: patch?.max_scale ?? cur.max_scale,
  container_concurrency: patch?.container_concurrency ?? cur.container_concurrency,
});

/** env_from entries: a secret or a config map, and the variable name the secret lands in. */
export function checkEnvFrom(list: Array<{ secret_name?: string; config_map_name?: string; optional?: boolean; env_name?: string }> | undefined): void {
  (list ?? []).forEach((e, i) => {
    const hasSecret = Boolean(e.secret_name);
    const hasMap = Boolean(e.config_map_name);
    if (hasSecret === hasMap) throw badRequest(`env_from[${i}]: set exactly one of secret_name or config_map_name`);
    if (e.env_name !== undefined && !ENV_NAME_RE.test(e.env_name)) throw badRequest(`env_from[${i}].env_name: invalid env name ${JSON.stringify(e.env_name)}`);
    if (hasMap && e.env_name !== undefined) throw badRequest(`env_from[${i}].env_name: only a secret_name entry takes env_name`);
  });
}

