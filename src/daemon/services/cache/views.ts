import { SIZE_CLASSES, type CacheCredential, type Condition, type MemorystoreView } from '../../../api/cache.js';
import type { InstanceRow } from './store.js';

/** Loopback is the "private address reachable from platform workloads" of the local platform. */
export const PRIVATE_HOST = '127.0.0.1';

export const resourcePath = (short: string, name: string) => `projects/${short}/memorystores/${name}`;
export const credentialSecretName = (name: string) => `ms-${name}-credential`;
/** The host name the instance's TLS certificate also carries (spec 3 §2.2: <name>-<project_short>.<domain>). */
export const externalHostname = (name: string, short: string) => `${name}-${short}.cache.localhost`;

/** The TLS endpoint is published once the server that serves it is up. */
const published = (row: InstanceRow) => Boolean(row.external_exposure && row.tls_port && row.state === 'ready');

export function externalEndpoint(row: InstanceRow): string | undefined {
  return published(row) ? `rediss://${PRIVATE_HOST}:${row.tls_port}` : undefined;
}

/** Credential shape of create and rotate: the password appears nowhere else. */
export function credentialView(row: InstanceRow): CacheCredential {
  const external = published(row) ? `rediss://:${row.password}@${PRIVATE_HOST}:${row.tls_port}` : undefined;
  return {
    username: 'default',
    password: row.password,
    uri: `redis://:${row.password}@${PRIVATE_HOST}:${row.port}`,
    ...(external ? { external_uri: external } : {}),
  };
}

const cond = (type: string, status: Condition['status'], reason: string, message?: string): Condition => ({
  type,
  status,
  reason,
  ...(message ? { message } : {}),
});

/** Conditions of spec 3 §2.2, derived from the stored state so they never disagree with it. */
export function conditionsOf(row: InstanceRow): Condition[] {
  const msg = row.message ?? undefined;
  const failed = /^provisioning failed/.test(msg ?? '');
  const workload: Record<InstanceRow['state'], Condition> = {
    ready: cond('WorkloadReady', 'True', 'Running'),
    provisioning: cond('WorkloadReady', 'False', failed ? 'StartFailed' : 'Provisioning', msg),
    degraded: cond('WorkloadReady', 'False', failed ? 'StartFailed' : 'Restarting', msg),
    unknown: cond('WorkloadReady', 'Unknown', 'Reconciling', msg),
    deleting: cond('WorkloadReady', 'False', 'Deleting', msg),
  };
  const w = workload[row.state];
  const list = [
    cond('CredentialReady', 'True', 'PasswordGenerated', `stored as ${credentialSecretName(row.name)}`),
    cond('ServiceReady', row.state === 'deleting' ? 'False' : 'True', row.state === 'deleting' ? 'Deleting' : 'PortAllocated', `${PRIVATE_HOST}:${row.port}`),
    w,
    cond('Ready', w.status, w.reason!, msg),
  ];
  if (row.external_exposure) {
    list.push(
      published(row)
        ? cond('ExternallyReachable', 'True', 'TLSPortServing', externalEndpoint(row))
        : cond('ExternallyReachable', row.state === 'unknown' ? 'Unknown' : 'False', 'NotServing', 'the TLS port is published once the instance is ready'),
    );
  }
  return list;
}

export function instanceView(row: InstanceRow, projectShort: string): MemorystoreView {
  const size = SIZE_CLASSES[row.size_class];
  const ready = row.state === 'ready';
  const endpoint = externalEndpoint(row);
  return {
    name: row.name,
    resource_path: resourcePath(projectShort, row.name),
    project_id: row.project_id,
    size_class: row.size_class,
    ...(row.version ? { version: row.version } : {}),
    maxmemory_policy: row.maxmemory_policy,
    persistence: {
      enabled: Boolean(row.persistence_enabled),
      size: row.persistence_size,
      ...(row.storage_class_name ? { storage_class_name: row.storage_class_name } : {}),
    },
    state: row.state,
    ready,
    ...(!ready && row.message ? { message: row.message } : {}),
    external_exposure: Boolean(row.external_exposure),
    externally_reachable: Boolean(endpoint),
    ...(endpoint ? { external_endpoint: endpoint } : {}),
    reachable_scope: 'internet',
    memory_limit: size.memory_limit,
    maxmemory: size.maxmemory,
    ready_replicas: ready ? 1 : 0,
    replicas: 1,
    connection: { host: PRIVATE_HOST, port: row.port, username: 'default', credential_secret: credentialSecretName(row.name) },
    conditions: conditionsOf(row),
    created_at: row.created_at,
  };
}
