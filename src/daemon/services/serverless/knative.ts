import { secretEnvName } from '../../../api/serverless.js';
import { loadYaml } from '../../lazy/modules.js';

/**
 * A service as a Knative `serving.knative.dev/v1` Service manifest (spec 2 §4.3, the spec route),
 * so the same document applies to a real Knative cluster. Pure: the view in, a YAML string out.
 * Read-only fields (state, conditions, urls, generation, the project path) are left out and the
 * env values of secret-looking keys are replaced by `***REDACTED***`.
 *
 * The input types are structural (the spec's field names), so the control plane's service view
 * and its stored revisions fit without a conversion layer.
 */

export const REDACTED = '***REDACTED***';
/** Spec 2 §4.3: a key matching any of these words (case-insensitive) has its value redacted. */
export const SECRET_KEY_RE = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE/i;
export const TIMEOUT_ENV = 'PLATFORM_REQUEST_TIMEOUT_SECONDS';
/** Spec 2 §4.3: max_scale 0 or negative behaves as 10 (in Knative 0 would mean unbounded). */
const EFFECTIVE_MAX_SCALE_WHEN_UNSET = 10;

export interface KnEnvFrom {
  secret_name?: string;
  config_map_name?: string;
  optional?: boolean;
  /** The variable the secret lands in (platform extension); default derived from the secret name. */
  env_name?: string;
}
export interface KnPort {
  name?: string;
  container_port?: number;
}
export interface KnQuantities {
  cpu?: string | number;
  memory?: string | number;
}
export interface KnResources {
  requests?: KnQuantities;
  limits?: KnQuantities;
}
export interface KnTraffic {
  revision_name?: string;
  latest_revision?: boolean;
  percent?: number;
  tag?: string;
}

/** The template of a revision: what a change of makes a new revision (spec 2 §2.3). */
export interface KnTemplate {
  image: string;
  command?: string[];
  args?: string[];
  env?: Record<string, string>;
  env_from?: KnEnvFrom[];
  ports?: KnPort[];
  resources?: KnResources;
  timeout_seconds?: number;
  runtime_class_name?: string;
  service_account_name?: string;
}

export interface KnService extends KnTemplate {
  name: string;
  /** projects/<short>/services/<name>: the short becomes the namespace. */
  project?: string;
  scaling?: { min_scale?: number; max_scale?: number; container_concurrency?: number };
  published?: boolean;
  publish?: { enabled?: boolean };
  traffic?: KnTraffic[];
  latest_created_revision?: string;
}

/** A stored revision; with its template it can be replayed before the current one (see below). */
export interface KnRevision {
  name: string;
  generation?: number;
  template?: KnTemplate;
}

const present = <T>(v: T | undefined | null): v is T => v !== undefined && v !== null;

/**
 * A platform secret holds one value; on a cluster it is a Secret named after it (lowercased, `_`
 * as `-`, as Kubernetes names require) whose one key is the variable the platform derives from the
 * name (upper-cased, `-` as `_`). `envFrom` imports that key as is; an `env_name` that differs
 * reads the same key into its own variable through `secretKeyRef`.
 */
export const k8sSecretName = (secret: string) => secret.toLowerCase().replace(/_/g, '-');
/** The key a project secret's value has in its Kubernetes Secret: the variable it lands in by default. */
export const secretVariable = (secret: string) => secretEnvName({ secret_name: secret });

function envList(t: KnTemplate): Record<string, unknown>[] {
  const env = { ...(t.env ?? {}) };
  // Mirrored like the platform does, so the container reads the same value on a cluster.
  if (t.timeout_seconds !== undefined && !(TIMEOUT_ENV in env)) env[TIMEOUT_ENV] = String(t.timeout_seconds);
  const plain: Record<string, unknown>[] = Object.entries(env).map(([name, value]) => ({ name, value: SECRET_KEY_RE.test(name) ? REDACTED : value }));
  const fromSecrets = (t.env_from ?? [])
    .filter((e) => e.secret_name && e.env_name && e.env_name !== secretVariable(e.secret_name))
    .map((e) => ({
      name: e.env_name!,
      valueFrom: { secretKeyRef: { name: k8sSecretName(e.secret_name!), key: secretVariable(e.secret_name!), ...(e.optional ? { optional: true } : {}) } },
    }));
  return [...plain, ...fromSecrets];
}

function envFromList(t: KnTemplate) {
  return (t.env_from ?? []).flatMap((e) => {
    const optional = e.optional ? { optional: true } : {};
    const out: Record<string, unknown>[] = [];
    const renamed = e.secret_name && e.env_name && e.env_name !== secretVariable(e.secret_name);
    if (e.secret_name && !renamed) out.push({ secretRef: { name: k8sSecretName(e.secret_name), ...optional } });
    if (e.config_map_name) out.push({ configMapRef: { name: e.config_map_name, ...optional } });
    return out;
  });
}

function quantities(q?: KnQuantities): Record<string, string | number> | undefined {
  if (!q) return undefined;
  const out: Record<string, string | number> = {};
  if (present(q.cpu) && q.cpu !== '') out.cpu = q.cpu;
  if (present(q.memory) && q.memory !== '') out.memory = q.memory;
  return Object.keys(out).length ? out : undefined;
}

function container(t: KnTemplate): Record<string, unknown> {
  const c: Record<string, unknown> = { name: 'user-container', image: t.image };
  if (t.command?.length) c.command = t.command;
  if (t.args?.length) c.args = t.args;
  const env = envList(t);
  if (env.length) c.env = env;
  const envFrom = envFromList(t);
  if (envFrom.length) c.envFrom = envFrom;
  const ports = (t.ports ?? [])
    .filter((p) => present(p.container_port))
    .map((p) => ({ ...(p.name ? { name: p.name } : {}), containerPort: p.container_port! }));
  if (ports.length) c.ports = ports;
  const requests = quantities(t.resources?.requests);
  const limits = quantities(t.resources?.limits);
  if (requests || limits) c.resources = { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
  return c;
}

function scaleAnnotations(s: KnService): Record<string, string> {
  const min = Math.max(0, s.scaling?.min_scale ?? 0);
  const rawMax = s.scaling?.max_scale ?? EFFECTIVE_MAX_SCALE_WHEN_UNSET;
  const max = rawMax <= 0 ? EFFECTIVE_MAX_SCALE_WHEN_UNSET : rawMax;
  return { 'autoscaling.knative.dev/min-scale': String(min), 'autoscaling.knative.dev/max-scale': String(max) };
}

function revisionSpec(s: KnService, t: KnTemplate): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (s.scaling?.container_concurrency !== undefined) spec.containerConcurrency = Math.max(0, s.scaling.container_concurrency);
  if (t.timeout_seconds !== undefined) spec.timeoutSeconds = t.timeout_seconds;
  if (t.service_account_name) spec.serviceAccountName = t.service_account_name;
  if (t.runtime_class_name) spec.runtimeClassName = t.runtime_class_name;
  spec.containers = [container(t)];
  return spec;
}

function trafficList(s: KnService): Record<string, unknown>[] {
  const traffic = s.traffic?.length ? s.traffic : [{ latest_revision: true, percent: 100 }];
  return traffic.map((r) => {
    const out: Record<string, unknown> = {};
    if (r.revision_name) out.revisionName = r.revision_name;
    out.latestRevision = !r.revision_name && r.latest_revision !== false;
    if (r.percent !== undefined) out.percent = r.percent;
    if (r.tag) out.tag = r.tag;
    return out;
  });
}

export function projectShort(s: Pick<KnService, 'project'>): string | undefined {
  return /^projects\/([^/]+)\//.exec(s.project ?? '')?.[1];
}

function published(s: KnService): boolean {
  return s.published ?? s.publish?.enabled ?? false;
}

/** One Service document: `template` is the revision it carries, `name` its pinned revision name. */
function document(s: KnService, t: KnTemplate, revisionName: string | undefined, withTraffic: boolean): Record<string, unknown> {
  const namespace = projectShort(s);
  const metadata: Record<string, unknown> = { name: s.name, ...(namespace ? { namespace } : {}) };
  if (!published(s)) metadata.labels = { 'networking.knative.dev/visibility': 'cluster-local' };
  const templateMeta: Record<string, unknown> = {};
  if (revisionName) templateMeta.name = revisionName;
  templateMeta.annotations = scaleAnnotations(s);
  const spec: Record<string, unknown> = { template: { metadata: templateMeta, spec: revisionSpec(s, t) } };
  if (withTraffic) spec.traffic = trafficList(s);
  return { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata, spec };
}

/**
 * The manifest objects, oldest first. Knative's Service holds one template, so a split that pins
 * older revisions by name cannot be expressed in one document: like `kn service export
 * --with-revisions --mode=replay`, each pinned older revision whose template is known comes first as
 * its own document (with its own revision name and the latest-only default traffic), and the last
 * document carries the current template, named after `latest_created_revision`, and the split.
 * `kubectl apply -f` applies them in order, creating the revisions under the same names.
 */
export function serviceManifestObjects(s: KnService, revisions: KnRevision[] = []): Record<string, unknown>[] {
  const pinned = new Set((s.traffic ?? []).map((r) => r.revision_name).filter((n): n is string => !!n && n !== s.latest_created_revision));
  const replay = revisions
    .filter((r) => pinned.has(r.name) && r.template)
    .sort((a, b) => (a.generation ?? 0) - (b.generation ?? 0) || a.name.localeCompare(b.name))
    .map((r) => document(s, r.template!, r.name, false));
  return [...replay, document(s, s, s.latest_created_revision, true)];
}

export function serviceManifest(s: KnService, revisions?: KnRevision[]): string {
  return serviceManifestObjects(s, revisions)
    .map((doc) => loadYaml().stringify(doc, { lineWidth: 0 }))
    .join('---\n');
}
