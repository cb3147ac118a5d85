import { knowledgeRoutes, KNOWLEDGE_LIMITS, type KnowledgeDocument } from '../../../api/knowledge.js';
import type { Area, AreaContext, OwnedAgentRef } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { badRequest, conflict, forbidden, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import type { Principal } from '../auth/principal.js';
import { chunkText } from './chunking.js';
import { platformEmbedder } from './embeddings.js';
import { knowledgeMigrations } from './migrations.js';
import { rankChunks } from './search.js';
import { documentView, knowledgeStore, type DocumentRow } from './store.js';
import { VectorCache } from './vector-cache.js';

/**
 * Knowledge (spec 1 §4.12 /knowledge): documents added to an agent, chunked, indexed for BM25 and,
 * with an embedding endpoint, vectors; searched by hybrid ranking. Must come after the agents
 * area: its tables reference agents and it reads agents through the ownedAgent hook.
 */
export function knowledgeArea(): Area {
  return {
    name: 'knowledge',
    migrations: knowledgeMigrations,
    register(r, ctx) {
      const vectorCache = new VectorCache();
      const agent = (p: Principal, name: string, project: string | undefined): OwnedAgentRef => {
        if (p.kind === 'workload') {
          // A workload key may only search its own agent's knowledge (the harness's search_knowledge
          // tool): any other agent is as unknown to it as a missing one; its own one is read-only.
          const own = ctx.hooks.workloadOwnAgent?.(p, name);
          if (!own) throw notFound(`unknown agent ${name}`);
          throw forbidden(WORKLOAD_SEARCH_ONLY);
        }
        if (!ctx.hooks.ownedAgent) throw notFound(`unknown agent ${name}`);
        return ctx.hooks.ownedAgent(p, name, project);
      };
      const searchable = (p: Principal, name: string, project: string | undefined, query: string | undefined): OwnedAgentRef => {
        if (p.kind !== 'workload' || query === undefined) return agent(p, name, project);
        const own = ctx.hooks.workloadOwnAgent?.(p, name);
        // ?project= naming another project never reaches here: the router's project gate 404s it.
        if (!own) throw notFound(`unknown agent ${name}`);
        return own;
      };
      r.handle(knowledgeRoutes.listOrSearch, async ({ principal, params, query }) => {
        const a = searchable(principal!, params.name, query.project, query.query);
        if (query.query === undefined) {
          if (query.top_k !== undefined) throw badRequest('top_k needs query');
          const page = ctx.pager.parse(query, `knowledge:${a.agentId}`);
          const rows = knowledgeStore.list(ctx.db, a.agentId, page.offset, page.size + 1);
          const { items, next_page_token } = ctx.pager.slice(page, rows);
          return { agent: a.name, documents: items.map(documentView), next_page_token: next_page_token ?? '' };
        }
        if (query.page_token !== undefined || query.page_size !== undefined || query.limit !== undefined) throw badRequest('a search is not paged: use top_k');
        return search(ctx, vectorCache, a, query.query, topK(query.top_k));
      });
      r.handle(knowledgeRoutes.add, async ({ principal, params, query, body, requestId }) => {
        const a = agent(principal!, params.name, query.project);
        const docs = body.documents.map((d) => ({ source: d.source, text: d.text, chunks: chunkText(d.text) }));
        const empty = docs.find((d) => !d.chunks.length);
        if (empty) throw badRequest(`document ${empty.source} has no text`);
        const total = docs.reduce((n, d) => n + d.chunks.length, 0);
        const check = () => {
          const held = knowledgeStore.chunkCount(ctx.db, a.agentId);
          if (held + total > KNOWLEDGE_LIMITS.chunksPerAgent) {
            throw conflict(`the knowledge base of ${a.name} holds ${held} chunks; adding ${total} passes the limit of ${KNOWLEDGE_LIMITS.chunksPerAgent}`, { used: held, limit: KNOWLEDGE_LIMITS.chunksPerAgent });
          }
        };
        check();
        // Embedding happens before the transaction (it is a network call); a failure adds nothing.
        const embedder = platformEmbedder(ctx.config);
        const vectors = embedder ? await embedder.embed(docs.flatMap((d) => d.chunks)) : undefined;
        const now = new Date(ctx.clock.now()).toISOString();
        const added: KnowledgeDocument[] = [];
        ctx.db.transaction(() => {
          check();
          let at = 0;
          for (const d of docs) {
            const row: DocumentRow = { id: newId(), agent_id: a.agentId, source: d.source, chars: d.text.length, chunks: d.chunks.length, embedded: vectors ? 1 : 0, created_at: now };
            knowledgeStore.insertDocument(ctx.db, row, d.chunks, vectors?.slice(at, at + d.chunks.length));
            at += d.chunks.length;
            added.push(documentView(row));
          }
          vectorCache.drop(a.agentId);
          writeAudit(ctx.db, ctx.clock, { projectId: a.projectId, actor: principal!.email, action: 'agent.knowledge.add', target: a.name, details: { documents: added.length, chunks: total }, requestId });
        })();
        return { agent: a.name, documents: added, chunks: total };
      });
      r.handle(knowledgeRoutes.empty, ({ principal, params, query, requestId }) => {
        const a = agent(principal!, params.name, query.project);
        const n = ctx.db.transaction(() => {
          const removed = knowledgeStore.empty(ctx.db, a.agentId);
          vectorCache.drop(a.agentId);
          writeAudit(ctx.db, ctx.clock, { projectId: a.projectId, actor: principal!.email, action: 'agent.knowledge.empty', target: a.name, details: removed, requestId });
          return removed;
        })();
        return { agent: a.name, deleted_documents: n.documents, deleted_chunks: n.chunks };
      });
      r.handle(knowledgeRoutes.deleteOne, ({ principal, params, query, requestId }) => {
        const a = agent(principal!, params.name, query.project);
        const doc = knowledgeStore.document(ctx.db, a.agentId, params.id);
        if (!doc) throw notFound(`unknown document ${params.id}`);
        ctx.db.transaction(() => {
          knowledgeStore.deleteDocument(ctx.db, doc.id);
          vectorCache.drop(a.agentId);
          writeAudit(ctx.db, ctx.clock, { projectId: a.projectId, actor: principal!.email, action: 'agent.knowledge.delete', target: a.name, details: { document: doc.id, source: doc.source }, requestId });
        })();
        return { agent: a.name, document: documentView(doc), deleted: true as const };
      });
    },
  };
}

const WORKLOAD_SEARCH_ONLY = "a workload key may only search its own agent's knowledge (GET ?query=); listing and changing it needs a person or a service account";

function topK(raw: string | undefined): number {
  if (raw === undefined) return KNOWLEDGE_LIMITS.topKDefault;
  const n = Number(raw);
  if (!(n >= 1 && n <= KNOWLEDGE_LIMITS.topKMax)) throw badRequest(`top_k must be between 1 and ${KNOWLEDGE_LIMITS.topKMax}`);
  return n;
}

/**
 * Hybrid when an embedding endpoint is configured and the agent has embedded chunks; a query
 * that cannot be embedded (endpoint down) still answers by BM25 and says so in `note`.
 */
async function search(ctx: AreaContext, vectors: VectorCache, a: OwnedAgentRef, query: string, k: number) {
  const embedder = platformEmbedder(ctx.config);
  let vector: Float32Array | undefined;
  let note: string | undefined;
  if (embedder && knowledgeStore.hasEmbeddings(ctx.db, a.agentId)) {
    try {
      [vector] = await embedder.embed([query]);
    } catch (e) {
      note = `${(e as Error).message.replace(/: nothing was added$/, '')}: ranked by full text only`;
    }
  }
  const results = rankChunks(ctx.db, vectors, a.agentId, query, k, vector);
  return { agent: a.name, query, mode: vector ? ('hybrid' as const) : ('bm25' as const), results, ...(note ? { note } : {}) };
}
