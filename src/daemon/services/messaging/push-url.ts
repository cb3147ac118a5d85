import { badRequest } from '../../http/errors.js';
import type { Hooks } from '../../area.js';
import type { MessagingConfig } from './config.js';
import { internalCallHeaders } from '../../internal-call.js';

export const PUSH_URL_FORM =
  'push url not allowed: use the http:// url of a workload in this project (the target\'s url field, e.g. http://<name>-<project_short>.<domain>[:port]/path), without userinfo';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Validates a push URL (spec 3 §4.3): http:// only, no userinfo, and the host must be a workload
 * of this project: `<name>-<project_short>.<domain>` (the form of the workload's url field) or an
 * address a workload area vouches for through the `pushTargets` hook. Loopback is accepted only
 * when the daemon allows it for local development.
 */
export function checkPushUrl(raw: string, project: { id: string; short: string }, config: MessagingConfig, hooks: Hooks): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest(PUSH_URL_FORM);
  }
  if (u.protocol !== 'http:' || u.username || u.password || u.hash) throw badRequest(PUSH_URL_FORM);
  if (config.allowLoopbackPush && LOOPBACK.has(u.hostname)) return u.toString();
  if (isProjectWorkloadHost(u.hostname, project.short)) return u.toString();
  if ((hooks.pushTargets ?? []).some((h) => h(project.id, u) !== undefined)) return u.toString();
  throw badRequest(PUSH_URL_FORM);
}

/** `<name>-<short>.<domain>` where name is a workload name (spec 1 §8.2) and short is this project's. */
export function isProjectWorkloadHost(host: string, short: string): boolean {
  const first = host.split('.')[0] ?? '';
  return host.includes('.') && first.endsWith(`-${short}`) && /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/.test(first.slice(0, -(short.length + 1)));
}

/**
 * Where to send a delivery: a workload area may map the workload's address to where it really
 * listens; otherwise `*.localhost` names go to loopback (the daemon routes by Host header), and
 * anything else is sent as written. A workload address of this project served by this daemon is
 * the workload's internal address, so the delivery is marked as a call from inside the platform
 * (it passes no public invoke gate, see internal-call.ts); nothing else ever gets that mark.
 */
export function dispatchTarget(url: string, project: { id: string; short: string }, hooks: Hooks, daemonPort: number, appsDomain = 'apps.localhost'): PushTarget {
  const u = new URL(url);
  for (const h of hooks.pushTargets ?? []) {
    const mapped = h(project.id, u);
    if (mapped) return { url: mapped, host: u.host, headers: {} };
  }
  // A server's own apps domain is served here whatever DNS says (docs/decisions/server.md): the
  // delivery goes to the loopback listener by Host, as a local `*.localhost` address does.
  if (!u.hostname.endsWith('.localhost') && u.hostname.endsWith(`.${appsDomain}`)) {
    const host = u.host;
    const own = isProjectWorkloadHost(u.hostname, project.short);
    u.hostname = '127.0.0.1';
    u.port = String(daemonPort);
    return { url: u.toString(), host, headers: own ? internalCallHeaders() : {} };
  }
  if (u.hostname.endsWith('.localhost')) {
    const host = u.host;
    const own = isProjectWorkloadHost(u.hostname, project.short) && Number(u.port || 80) === daemonPort;
    u.hostname = '127.0.0.1';
    return { url: u.toString(), host, headers: own ? internalCallHeaders() : {} };
  }
  return { url, headers: {} };
}

export interface PushTarget {
  url: string;
  /** Host header to send when the url was rewritten to loopback. */
  host?: string;
  headers: Record<string, string>;
}
