import { agentRoutes } from '../api/agents.js';
import { gatewayRoutes } from '../api/gateway.js';
import { serverlessRoutes } from '../api/serverless.js';
import type { ApiClient } from './api-client.js';
import { AbortError, ApiCallError } from './errors.js';

export const ADDRESS_KINDS = ['agent', 'service', 'endpoint'] as const;
export type AddressKind = (typeof ADDRESS_KINDS)[number];

export interface PublicAddress {
  name: string;
  /** agent or function (spec 1 §2.2 kind), service, or gateway endpoint. */
  kind: 'agent' | 'function' | 'service' | 'endpoint';
  url: string;
  ready: boolean;
  /** Why it may not answer yet (not ready, not published). */
  message?: string;
}

/** undefined for a 404: "not this kind"; every other failure is the caller's to see. */
async function found<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiCallError && e.status === 404) return undefined;
    throw e;
  }
}

/**
 * The public address of a workload by name, for `platform open`: an agent or function's
 * public_url, a serverless service's url, or a gateway endpoint's url. Agents and services share
 * one namespace in a project; an endpoint may carry the same name as its target, so without a
 * kind the workload wins and the endpoint is mentioned in `others`.
 */
export async function publicAddress(
  client: ApiClient,
  project: string,
  name: string,
  kind?: AddressKind,
): Promise<{ address: PublicAddress; others: PublicAddress[] }> {
  const want = (k: AddressKind) => !kind || kind === k;
  const projectID = project;
  const [agent, service, endpoint] = await Promise.all([
    want('agent') ? found(client.call(agentRoutes.get, { params: { name }, query: { project } })) : undefined,
    want('service') ? found(client.call(serverlessRoutes.get, { params: { projectID, name } })) : undefined,
    want('endpoint') ? found(client.call(gatewayRoutes.get, { params: { projectID, name } })) : undefined,
  ]);
  const all: PublicAddress[] = [];
  if (agent) all.push({ name, kind: agent.kind, url: agent.public_url, ready: agent.ready, message: agent.ready ? undefined : agent.message ?? `it is ${agent.state}` });
  if (service) all.push({ name, kind: 'service', url: service.url, ready: service.ready, message: service.ready ? undefined : `it is ${service.state}` });
  if (endpoint) {
    const e = endpoint;
    const ready = e.published && e.state === 'ready';
    all.push({ name, kind: 'endpoint', url: e.url, ready, message: ready ? undefined : !e.published ? 'the endpoint is not published (`platform gateway endpoints publish`)' : e.message ?? `it is ${e.state}` });
  }
  const [address, ...others] = all;
  if (!address) {
    const what = kind === 'endpoint' ? 'gateway endpoint' : kind ?? 'agent, function, service or gateway endpoint';
    throw new AbortError(`no ${what} named ${name} in project ${project}`, 'see them with `platform status`, `platform services list` or `platform gateway endpoints list`');
  }
  return { address, others };
}
