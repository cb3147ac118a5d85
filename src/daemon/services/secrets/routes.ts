import type { IncomingMessage } from 'node:http';
import { DEFAULT_BODY_LIMIT } from '../../../api/contract.js';
import { RevealBody, secretMapRoutes, secretRoutes, vaultFallbackRoutes, vaultRoutes } from '../../../api/secrets.js';
import type { Area, AreaContext } from '../../area.js';
import { provideMasterKey } from '../../crypto/sealed.js';
import { parseJsonBody, readBody } from '../../http/body.js';
import { ownBaseUrl } from '../../public-address.js';
import { sendJson, type Router } from '../../http/router.js';
import * as bindings from './bindings.js';
import type { Deps } from './deps.js';
import { MasterKey } from './master-key.js';
import { secretMigrations } from './migrations.js';
import * as secrets from './service.js';
import * as store from './store.js';
import { issueToken } from './tokens.js';
import { vaultHandler, VaultError } from './vault-http.js';
import { serveVaultMetadata, serveVaultRead } from './vault-read.js';
import { serveHealth, serveMountInfo, serveSealStatus } from './vault-sys.js';
import { serveLookupSelf, serveRenewSelf } from './vault-token.js';
import { namesIn } from '../search/names.js';
import { RESERVED_SECRET_NAME } from '../../../api/secrets.js';

/** Read tokens point at the daemon's own address, never the request's Host (docs/decisions/secrets.md). */
const baseUrlOf = (ctx: AreaContext) => ownBaseUrl(ctx.config);

/**
 * Reveal's body is optional and forgiving (spec 2 §4.1): a malformed one reveals the current
 * version, so it is read here instead of by the router's strict JSON parsing. Each field is kept
 * on its own: a reason is recorded in the audit row even when the version beside it is malformed.
 */
async function lenientRevealBody(req: IncomingMessage): Promise<{ version?: number; reason?: string }> {
  const raw = await readBody(req, DEFAULT_BODY_LIMIT);
  let parsed: unknown;
  try {
    parsed = raw.length ? parseJsonBody(raw) : {};
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const src = parsed as Record<string, unknown>;
  const version = RevealBody.shape.version.safeParse(src.version);
  const reason = RevealBody.shape.reason.safeParse(src.reason);
  return {
    ...(version.success && version.data !== undefined ? { version: version.data } : {}),
    ...(reason.success && reason.data !== undefined ? { reason: reason.data } : {}),
  };
}

function register(r: Router, ctx: AreaContext, d: Deps): void {
  r.handle(secretRoutes.list, ({ principal, params, query }) => secrets.list(d, principal!, params.projectID, query));
  r.handle(secretRoutes.write, ({ principal, params, body, requestId }) => secrets.write(d, principal!, params.projectID, body, requestId));
  r.handle(secretRoutes.get, ({ principal, params }) => secrets.get(d, principal!, params.projectID, params.name));
  r.handle(secretRoutes.versions, ({ principal, params }) => secrets.versions(d, principal!, params.projectID, params.name));
  r.handle(secretRoutes.delete, ({ principal, params, requestId }) => secrets.remove(d, principal!, params.projectID, params.name, requestId));
  r.raw(secretRoutes.reveal, async (c, params) => {
    const body = await lenientRevealBody(c.req);
    sendJson(c.res, 200, secrets.reveal(d, c.principal!, params.projectID!, params.name!, body, c.requestId));
  });
  r.handle(secretRoutes.issueToken, ({ principal, params, body, requestId }) =>
    issueToken(d, principal!, params.projectID, params.name, body, baseUrlOf(ctx), requestId),
  );
  r.handle(secretRoutes.issueProjectToken, ({ principal, params, body, requestId }) =>
    issueToken(d, principal!, params.projectID, undefined, body, baseUrlOf(ctx), requestId),
  );

  r.handle(secretMapRoutes.list, ({ principal, params, query }) => bindings.listAll(d, principal!, params.projectID, query));
  r.handle(secretMapRoutes.agentList, ({ principal, params }) => bindings.listAgent(d, principal!, params.projectID, params.agent));
  r.handle(secretMapRoutes.put, ({ principal, params, body, requestId }) => bindings.put(d, principal!, params.projectID, params.agent, params.envName, body, requestId));
  r.handle(secretMapRoutes.delete, ({ principal, params, requestId }) => bindings.unbind(d, principal!, params.projectID, params.agent, params.envName, requestId));
  r.handle(secretMapRoutes.apply, ({ principal, params, requestId }) => bindings.apply(d, principal!, params.projectID, params.agent, requestId));

  const urlOf = (c: { req: IncomingMessage }) => new URL(c.req.url ?? '/', 'http://localhost');
  r.raw(vaultRoutes.read, (c, params) => serveVaultRead(d, c, params, urlOf(c)));
  r.raw(vaultRoutes.metadata, (c, params) => serveVaultMetadata(d, c, params, urlOf(c)));
  r.raw(vaultRoutes.lookupSelf, (c) => serveLookupSelf(d, c));
  r.raw(vaultRoutes.renewSelf, (c) => serveRenewSelf(d, c));
  r.raw(vaultRoutes.mountInfo, (c, params) => serveMountInfo(d, c, params));
  r.raw(vaultRoutes.sealStatus, async (c) => serveSealStatus(d, c));
  r.raw(vaultRoutes.health, async (c) => serveHealth(d, c, urlOf(c)));
  for (const fallback of vaultFallbackRoutes) {
    r.raw(fallback, (c, params) =>
      vaultHandler(c, () => {
        throw new VaultError(404, [`no handler for route "${params.rest}": this store serves KV v2 reads, metadata and lists, token lookup-self and renew-self, sys/health, sys/seal-status and the kv mount preflight`]);
      }),
    );
  }
}

/** One store per daemon (tests run several daemons in one process). */
const depsOf = new WeakMap<AreaContext, Deps>();

/** Project secret store, read tokens with a Vault KV v2 read path, and agent bindings (spec 2 §4.1). */
export const secretsArea: Area = {
  name: 'secrets',
  migrations: secretMigrations,
  register(r, ctx) {
    const d: Deps = { ctx, key: new MasterKey(ctx.db, ctx.config.home, ctx.config.secretsStore !== 'off') };
    depsOf.set(ctx, d);
    // Other areas (agent secrets) seal their values under the same master key.
    provideMasterKey(ctx.db, () => d.key.require());
    register(r, ctx, d);
    // Names only (spec 1 §4.11 "secrets by name"); the reserved model-credential entry is not a secret of the user's.
    ctx.hooks.searchables.push(namesIn(ctx.db, 'secret', 'sec_secrets', `live = 1 AND name <> '${RESERVED_SECRET_NAME}'`));
    ctx.hooks.boundSecretEnv = (projectId, agent) => bindings.boundEnv(d, projectId, agent);
    ctx.hooks.projectSecretValue = (projectId, name) => bindings.currentValue(d, projectId, name);
    ctx.hooks.projectDependents.push((projectId) => {
      const n = store.countLive(ctx.db, projectId);
      return n ? `${n} secret${n === 1 ? '' : 's'}` : undefined;
    });
  },
  async start(ctx) {
    depsOf.get(ctx)?.key.init();
  },
};
