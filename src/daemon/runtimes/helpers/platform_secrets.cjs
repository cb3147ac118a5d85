'use strict';
/**
 * Read project secrets from inside a workload (spec 2 section 4.1, runtime read).
 *
 * Every nodejs function gets this file as .platform/platform_secrets.cjs beside its index:
 *
 *   const { getSecret } = require('./.platform/platform_secrets.cjs');   // or: import { getSecret } from './.platform/platform_secrets.cjs'
 *   const password = await getSecret('db-password');
 *
 * Mints a project-scoped read token with the workload key (SVC_API_URL, SVC_PROJECT_ID,
 * SVC_PROJECT_KEY; lifetime PLATFORM_REQUEST_TIMEOUT_SECONDS, default 300) and reads the value from
 * the store's Vault KV v2 read path. A missing variable throws instead of returning nothing.
 * No dependencies (Node 18+ fetch). Run `node platform_secrets.cjs NAME` to print one value.
 */

const REQUIRED = ['SVC_API_URL', 'SVC_PROJECT_ID', 'SVC_PROJECT_KEY'];
// Renew a little before expiry so a read never races the token's end.
const RENEW_MARGIN_MS = 10_000;

class SecretError extends Error {}

let cached;

function settings() {
  const missing = REQUIRED.filter((n) => !process.env[n]);
  if (missing.length) {
    throw new SecretError(`cannot read platform secrets: environment variable(s) ${missing.join(', ')} missing (every deployed workload receives them)`);
  }
  const rawTtl = process.env.PLATFORM_REQUEST_TIMEOUT_SECONDS || '300';
  const ttl = Number(rawTtl);
  if (!Number.isInteger(ttl)) throw new SecretError(`PLATFORM_REQUEST_TIMEOUT_SECONDS must be an integer, got ${JSON.stringify(rawTtl)}`);
  return { api: process.env.SVC_API_URL.replace(/\/$/, ''), project: process.env.SVC_PROJECT_ID, key: process.env.SVC_PROJECT_KEY, ttl };
}

async function call(url, init) {
  let res;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    throw new SecretError(`cannot reach the platform at ${url.split('/v1/')[0]}: ${e.cause?.message ?? e.message}`);
  }
  let body = {};
  try {
    body = await res.json();
  } catch {
    // an empty or non-JSON body carries no detail
  }
  return { status: res.status, body };
}

async function projectToken() {
  if (cached && Date.now() < cached.expires - RENEW_MARGIN_MS) return cached;
  const s = settings();
  const { status, body } = await call(`${s.api}/v1/projects/${encodeURIComponent(s.project)}/secrets:issue-token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ttl_seconds: s.ttl }),
  });
  if (status !== 200) throw new SecretError(`minting a secret read token failed (${status}): ${body.error ?? 'no detail'}`);
  cached = { token: body.token, expires: Date.now() + body.ttl_seconds * 1000, addr: body.read.addr, path: body.read.path };
  return cached;
}

/** The current value of project secret `name`; rejects with SecretError when it cannot be read. */
async function getSecret(name) {
  if (!name) throw new SecretError('getSecret needs a secret name');
  const t = await projectToken();
  const { status, body } = await call(`${t.addr}/v1/${t.path}${encodeURIComponent(name)}`, { headers: { 'x-vault-token': t.token } });
  if (status === 200) return body.data.data.value;
  if (status === 404) throw new SecretError(`secret ${name} not found in this project`);
  if (status === 403) cached = undefined; // expired or revoked: the next call mints a fresh token
  throw new SecretError(`reading secret ${name} failed (${status}): ${(body.errors ?? []).join('; ') || 'no detail'}`);
}

module.exports = { getSecret, SecretError };

if (require.main === module) {
  const name = process.argv[2];
  if (!name || process.argv.length !== 3) {
    process.stderr.write('usage: node platform_secrets.cjs SECRET_NAME\n');
    process.exit(2);
  }
  getSecret(name).then(
    (v) => process.stdout.write(v),
    (e) => {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(1);
    },
  );
}
