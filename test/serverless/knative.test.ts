import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Service } from '@kubernetes-models/knative/serving.knative.dev/v1/Service';
import { REDACTED, serviceManifest, type KnRevision, type KnService } from '../../src/daemon/services/serverless/knative.js';
import type { ServiceView } from '../../src/api/serverless.js';

// The contract's service view is accepted as it is (checked by the typecheck).
export const viewFits = (v: ServiceView): KnService => v;

/** Every manifest the spec route can emit must pass Knative's own published Service schema. */

const base = { project: 'projects/k3x9q2/services/web', latest_created_revision: 'web-00001' };

const cases: { title: string; service: KnService; revisions?: KnRevision[] }[] = [
  {
    title: 'defaults as create fills them',
    service: {
      ...base,
      name: 'web',
      image: 'platform-node:local',
      ports: [{ name: 'http1', container_port: 8080 }],
      resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      scaling: { min_scale: 0, max_scale: 10, container_concurrency: 80 },
      timeout_seconds: 300,
      published: false,
      traffic: [{ latest_revision: true, percent: 100 }],
    },
  },
  { title: 'only the required fields', service: { name: 'bare', image: 'busybox' } },
  {
    title: 'every field set',
    service: {
      ...base,
      name: 'web',
      image: 'registry.example/team/web@sha256:' + 'a'.repeat(64),
      command: ['python3', 'main.py'],
      args: ['--workers', '2'],
      env: { MODE: 'prod', EMPTY: '' },
      env_from: [{ secret_name: 'db-url' }, { config_map_name: 'settings', optional: true }],
      ports: [{ name: 'h2c', container_port: 9000 }],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '2', memory: '1Gi' } },
      scaling: { min_scale: 2, max_scale: 5, container_concurrency: 1 },
      timeout_seconds: 3600,
      runtime_class_name: 'gvisor',
      service_account_name: 'runner',
      published: true,
    },
  },
  {
    title: 'secret-looking env',
    service: {
      ...base,
      name: 'web',
      image: 'busybox',
      env: { API_KEY: 'k1', auth_token: 't1', DbPassword: 'p1', passwd: 'p2', CREDENTIALS_FILE: 'c', private_pem: 'x', Client_Secret: 's', HOST: 'h', KEYBOARD: 'k' },
    },
  },
  {
    title: 'a split with tags pinning older revisions',
    service: {
      ...base,
      name: 'web',
      image: 'web:v3',
      latest_created_revision: 'web-00003',
      scaling: { max_scale: 0, container_concurrency: 0 },
      traffic: [
        { revision_name: 'web-00001', percent: 10, tag: 'old' },
        { revision_name: 'web-00002', percent: 40, tag: 'blue' },
        { latest_revision: true, percent: 50, tag: 'latest' },
      ],
    },
    revisions: [
      { name: 'web-00002', generation: 2, template: { image: 'web:v2', env: { SECRET_KEY: 'v2' }, timeout_seconds: 60 } },
      { name: 'web-00001', generation: 1, template: { image: 'web:v1' } },
      { name: 'web-00003', generation: 3, template: { image: 'web:v3' } },
    ],
  },
  {
    title: 'env_from only and unpublished',
    service: { ...base, name: 'worker', image: 'worker:1', env_from: [{ secret_name: 'API_TOKEN', optional: true }, { secret_name: 'a', config_map_name: 'b' }, { secret_name: 'db-url', env_name: 'DATABASE_URL' }, { secret_name: 'x-y', env_name: 'X_Y' }], publish: { enabled: false } },
  },
];

function docs(yaml: string): any[] {
  const parsed = parseAllDocuments(yaml);
  for (const d of parsed) expect(d.errors).toEqual([]);
  return parsed.map((d) => d.toJS());
}

describe('Knative manifest of a service', () => {
  it.each(cases)('$title: parses as YAML and passes the Knative Service schema', ({ service, revisions }) => {
    const out = docs(serviceManifest(service, revisions));
    expect(out.length).toBeGreaterThan(0);
    for (const doc of out) {
      expect(() => new Service(doc).validate()).not.toThrow();
      expect(doc.apiVersion).toBe('serving.knative.dev/v1');
      expect(doc.kind).toBe('Service');
      expect(doc.metadata.name).toBe(service.name);
      // Internal fields never leave the platform.
      expect(doc.status).toBeUndefined();
      expect(JSON.stringify(doc)).not.toMatch(/"generation"|projects\/|observed_generation|conditions/);
      const c = doc.spec.template.spec.containers;
      expect(c).toHaveLength(1);
      expect(c[0].name).toBe('user-container');
    }
  });

  it('maps the defaults: namespace from the project, scaling annotations, visibility, default traffic', () => {
    const [doc] = docs(serviceManifest(cases[0]!.service));
    expect(doc.metadata).toEqual({ name: 'web', namespace: 'k3x9q2', labels: { 'networking.knative.dev/visibility': 'cluster-local' } });
    expect(doc.spec.template.metadata).toEqual({
      name: 'web-00001',
      annotations: { 'autoscaling.knative.dev/min-scale': '0', 'autoscaling.knative.dev/max-scale': '10' },
    });
    expect(doc.spec.template.spec).toMatchObject({ containerConcurrency: 80, timeoutSeconds: 300 });
    expect(doc.spec.template.spec.containers[0]).toEqual({
      name: 'user-container',
      image: 'platform-node:local',
      env: [{ name: 'PLATFORM_REQUEST_TIMEOUT_SECONDS', value: '300' }],
      ports: [{ name: 'http1', containerPort: 8080 }],
      resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    });
    expect(doc.spec.traffic).toEqual([{ latestRevision: true, percent: 100 }]);
    const [bare] = docs(serviceManifest(cases[1]!.service));
    expect(bare.metadata.namespace).toBeUndefined();
    expect(bare.spec.traffic).toEqual([{ latestRevision: true, percent: 100 }]);
  });

  it('maps every field of the template', () => {
    const [doc] = docs(serviceManifest(cases[2]!.service));
    expect(doc.metadata.labels).toBeUndefined();
    const spec = doc.spec.template.spec;
    expect(spec).toMatchObject({ containerConcurrency: 1, timeoutSeconds: 3600, runtimeClassName: 'gvisor', serviceAccountName: 'runner' });
    expect(doc.spec.template.metadata.annotations).toEqual({ 'autoscaling.knative.dev/min-scale': '2', 'autoscaling.knative.dev/max-scale': '5' });
    expect(spec.containers[0]).toMatchObject({
      command: ['python3', 'main.py'],
      args: ['--workers', '2'],
      env: [
        { name: 'MODE', value: 'prod' },
        { name: 'EMPTY', value: '' },
        { name: 'PLATFORM_REQUEST_TIMEOUT_SECONDS', value: '3600' },
      ],
      envFrom: [{ secretRef: { name: 'db-url' } }, { configMapRef: { name: 'settings', optional: true } }],
      ports: [{ name: 'h2c', containerPort: 9000 }],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '2', memory: '1Gi' } },
    });
  });

  it('redacts the values of secret-looking keys, case-insensitively, and nothing else', () => {
    const yaml = serviceManifest(cases[3]!.service);
    for (const v of ['k1', 't1', 'p1', 'p2', 'c', 'x', 's', 'k']) expect(yaml).not.toMatch(new RegExp(`value: ${v}$`, 'm'));
    const env = Object.fromEntries((docs(yaml)[0].spec.template.spec.containers[0].env as { name: string; value: string }[]).map((e) => [e.name, e.value]));
    for (const k of ['API_KEY', 'auth_token', 'DbPassword', 'passwd', 'CREDENTIALS_FILE', 'private_pem', 'Client_Secret', 'KEYBOARD']) expect(env[k]).toBe(REDACTED);
    expect(env.HOST).toBe('h');
    expect(yaml).toContain(`value: "${REDACTED}"`);
  });

  it('replays pinned older revisions first, like kn service export --with-revisions, each under its own name', () => {
    const c = cases[4]!;
    const out = docs(serviceManifest(c.service, c.revisions));
    expect(out.map((d) => d.spec.template.metadata.name)).toEqual(['web-00001', 'web-00002', 'web-00003']);
    expect(out.map((d) => d.spec.template.spec.containers[0].image)).toEqual(['web:v1', 'web:v2', 'web:v3']);
    // Only the last document carries the split; the older ones take Knative's default.
    expect(out.slice(0, 2).every((d) => d.spec.traffic === undefined)).toBe(true);
    expect(out[2].spec.traffic).toEqual([
      { revisionName: 'web-00001', latestRevision: false, percent: 10, tag: 'old' },
      { revisionName: 'web-00002', latestRevision: false, percent: 40, tag: 'blue' },
      { latestRevision: true, percent: 50, tag: 'latest' },
    ]);
    // A replayed revision is redacted too; max_scale 0 behaves as 10; concurrency 0 is Knative's default.
    expect(out[1].spec.template.spec.containers[0].env).toContainEqual({ name: 'SECRET_KEY', value: REDACTED });
    expect(out[2].spec.template.metadata.annotations['autoscaling.knative.dev/max-scale']).toBe('10');
    expect(out[2].spec.template.spec.containerConcurrency).toBe(0);
    // Without the stored templates there is nothing to replay: one document.
    expect(docs(serviceManifest(c.service))).toHaveLength(1);
  });

  it('maps env_from: secretRef (Kubernetes name) and configMapRef keeping optional, env_name through secretKeyRef', () => {
    const [doc] = docs(serviceManifest(cases[5]!.service));
    expect(doc.metadata.labels).toEqual({ 'networking.knative.dev/visibility': 'cluster-local' });
    const c = doc.spec.template.spec.containers[0];
    expect(c.envFrom).toEqual([
      { secretRef: { name: 'api-token', optional: true } },
      { secretRef: { name: 'a' } },
      { configMapRef: { name: 'b' } },
      { secretRef: { name: 'x-y' } },
    ]);
    // The secret's one key is the variable derived from its name; env_name reads it under another.
    expect(c.env).toEqual([{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'db-url', key: 'DB_URL' } } }]);
  });

  it('the schema check is real: a manifest missing its container image name fails it', () => {
    const [doc] = docs(serviceManifest(cases[1]!.service));
    delete doc.spec.template.spec.containers[0].name;
    expect(() => new Service(doc).validate()).toThrow(/name/);
  });
});
