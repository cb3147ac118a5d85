import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { VECTOR_LIMITS, type VectorCredentials } from '../../../api/vector.js';
import type { AreaContext } from '../../area.js';
import { statePaths, writePrivate } from '../../bootstrap.js';
import { ownBaseUrl } from '../../public-address.js';
import type { ProjectAccess } from '../accounts/access.js';
import type { VectorRuntime } from './runtime.js';
import { collectionName } from './indexes.js';

const ISSUER = 'platform-vectordb';

/**
 * Direct-access credentials (spec 3 §4.1). Locally the "vector store" is the daemon itself, so
 * the direct endpoint is a Qdrant-compatible REST subset served by the daemon under /vectordb
 * (see direct.ts). The token is a non-expiring HS256 JWT under a key of its own (keys/vectordb.key),
 * read-write on the collections listed at mint time and unable to create collections. The key
 * that signs management sessions (the store's "master key" here) is never returned.
 */
export class DirectTokens {
  private key?: Uint8Array;
  constructor(private readonly ctx: AreaContext) {}

  private secret(): Uint8Array {
    if (this.key) return this.key;
    const file = join(statePaths(this.ctx.config.home).keys, 'vectordb.key');
    if (!existsSync(file)) writePrivate(file, randomBytes(32).toString('base64'));
    return (this.key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
  }

  async mint(projectId: string, collections: string[]): Promise<string> {
    const { SignJWT } = await import('jose'); // loaded on first use, off the start-up path
    return new SignJWT({ collections, access: 'rw' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(projectId)
      .setIssuedAt(Math.floor(this.ctx.clock.now() / 1000))
      .setIssuer(ISSUER)
      .sign(this.secret());
  }

  /** The project and collections of a valid token, or undefined. */
  async verify(token: string): Promise<{ projectId: string; collections: string[] } | undefined> {
    try {
      const { jwtVerify } = await import('jose');
      const { payload } = await jwtVerify(token, this.secret(), { issuer: ISSUER, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || !Array.isArray(payload.collections)) return undefined;
      return { projectId: payload.sub, collections: payload.collections.map(String) };
    } catch {
      return undefined;
    }
  }
}

/** Builds the credential response; service_url is the daemon's own address, never the request's Host. */
export async function directCredentials(rt: VectorRuntime, tokens: DirectTokens, access: ProjectAccess, req: IncomingMessage): Promise<VectorCredentials> {
  const max = VECTOR_LIMITS.collectionsPerToken;
  const names = rt.store.indexNames(access.project.id, max + 1);
  const truncated = names.length > max;
  const collections = names.slice(0, max).map((n) => collectionName(access.project, n));
  return {
    service_url: `${ownBaseUrl(rt.ctx.config)}/vectordb`,
    token: await tokens.mint(access.project.id, collections),
    collection_prefix: `p_${access.project.short}_`,
    collections,
    truncated,
    note:
      'Qdrant-compatible REST subset served by the local daemon (collections: list, get, exists, delete, payload indexes; points: ' +
      'upsert, retrieve, count, scroll with order_by, delete, payload and vector updates; search, search batch, recommend, query); ' +
      'send the token as the api-key header or as a bearer token. With @qdrant/js-client-rest pass the path of service_url as ' +
      '`prefix` (that client ignores a path in `url`). ' +
      (rt.ctx.config.vector.qdrantPort !== undefined
        ? `Clients that take no prefix: http://${rt.ctx.config.host}:${rt.ctx.config.vector.qdrantPort} serves the same routes. `
        : '') +
      'Read-write on the listed collections only; it cannot create collections and does not expire. An index created later needs a fresh fetch.',
  };
}
