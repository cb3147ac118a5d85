import { gatewayRoutes, type GatewayKey } from '../../../api/gateway.js';
import type { StatusTarget } from '../loaders.js';
import { linesOf, oneLine, plural, settle, when } from './read.js';

const keyLine = (k: GatewayKey) =>
  `  ${(k.note || k.key_id).padEnd(24)} ${k.state.padEnd(8)} ${k.key_id}${k.superseded ? ' (outgoing half of a rotation)' : ''}${k.expires_at ? ` expires ${when(k.expires_at)}` : ''}`;

/**
 * A gateway endpoint: host and path, target, auth mode, keys (count and names: a key's name is its
 * note, else its id), allow list, rate limit, and the domain with its state (shared address, or a
 * custom hostname and whether its CNAME is verified).
 */
export async function endpointDetails(t: StatusTarget, name: string): Promise<string[]> {
  const got = await settle(t.client.call(gatewayRoutes.get, { params: { projectID: t.project, name } }));
  return linesOf(`endpoint ${name}`, got, (e) => {
    const url = URL.canParse(e.url) ? new URL(e.url) : undefined;
    const live = e.keys.filter((k) => k.state === 'live');
    const domain =
      e.domain_kind === 'shared'
        ? [`domain shared address ${e.hostname}`]
        : e.domain
          ? [
              `domain ${e.domain.hostname}: ${e.domain.verified ? `verified ${when(e.domain.verified_at)}` : 'not verified'}`,
              ...(e.domain.verified ? [] : [`  needs ${e.domain.record.type} ${e.domain.record.name} -> ${e.domain.record.value}`]),
            ]
          : [`domain ${e.hostname}: custom, no claim found`];
    return [
      `endpoint ${e.name}: ${e.state}${e.published || e.state === 'unpublished' ? '' : ' (not published)'}${e.message ? ` · ${oneLine(e.message)}` : ''}`,
      `host ${url?.host ?? e.hostname} · path ${url?.pathname ?? '/'}`,
      `address ${e.url}`,
      `target ${e.target.kind}${e.target.name ? ` ${e.target.name}` : ''}`,
      `auth ${e.auth.mode}${e.auth.jwt ? ` · issuer ${e.auth.jwt.issuer} · audiences ${e.auth.jwt.audiences.join(', ')}` : ''}`,
      `allow list ${e.ip_allowlist.length ? e.ip_allowlist.join(', ') : 'none (every address)'}`,
      `rate limit ${e.rate_limit ? `${e.rate_limit.requests} per ${e.rate_limit.unit} by ${e.rate_limit.key}` : 'none'}`,
      ...domain,
      '',
      `keys: ${plural(e.keys.length, 'key')}, ${live.length} live${e.auth.mode === 'apikey' ? '' : ` (auth ${e.auth.mode}: keys are not asked for)`}`,
      ...e.keys.map(keyLine),
    ];
  });
}
