import { z } from 'zod';
import { MiB, route } from './contract.js';
import { PageQuery, Timestamp, Uuid } from './common.js';
import { AgentName } from './agents.js';
import { lazySchema } from './lazy.js';

/**
 * An agent's knowledge base (spec 1 §4.12 "/knowledge (list or search with ?query=, add, empty,
 * delete one)"; bodies not shown). Shaped like the knowledge bases of Qdrant/pgvector RAG stacks
 * and Vertex AI RAG: documents in, ranked chunks out, each with its score and source.
 */
export const KNOWLEDGE_LIMITS = {
  /** One add request: the invoke cap (spec 1 §8.1), so a document fits in one call. */
  addBytes: 1 * MiB,
  documentsPerAdd: 100,
  sourceChars: 512,
  /** Chunks one agent may hold: a knowledge base is per agent, not a vector database. */
  chunksPerAgent: 50_000,
  chunkChars: 1000,
  topKDefault: 5,
  topKMax: 50,
  queryChars: 1000,
} as const;

export const KnowledgeDocument = lazySchema(() => z.object({
  id: Uuid,
  source: z.string(),
  chars: z.number().int(),
  chunks: z.number().int(),
  /** Whether the chunks also carry embeddings (an embedding endpoint was configured when added). */
  embedded: z.boolean(),
  created_at: Timestamp,
}));
export type KnowledgeDocument = z.infer<typeof KnowledgeDocument>;

export const KnowledgeHit = lazySchema(() => z.object({
  document_id: Uuid,
  source: z.string(),
  /** Position of the chunk inside its document, from 0. */
  chunk: z.number().int(),
  text: z.string(),
  /** The ranking score: BM25 (higher is better) in bm25 mode, reciprocal rank fusion in hybrid mode. */
  score: z.number(),
  bm25_score: z.number().optional(),
  vector_score: z.number().optional(),
}));
export type KnowledgeHit = z.infer<typeof KnowledgeHit>;

const NameParams = lazySchema(() => z.object({ name: AgentName }));
const DocParams = lazySchema(() => z.object({ name: AgentName, id: Uuid }));
const ProjectQuery = lazySchema(() => z.object({ project: z.string().optional() }));

export const KnowledgeListResponse = lazySchema(() => z.object({ agent: z.string(), documents: z.array(KnowledgeDocument), next_page_token: z.string() }));
export const KnowledgeSearchResponse = lazySchema(() => z.object({
  agent: z.string(),
  query: z.string(),
  /** hybrid when chunks and query were embedded, bm25 otherwise. */
  mode: z.enum(['bm25', 'hybrid']),
  results: z.array(KnowledgeHit),
  note: z.string().optional(),
}));

export const knowledgeRoutes = {
  listOrSearch: route({
    id: 'knowledge.list',
    method: 'GET',
    path: '/v1/agents/{name}/knowledge',
    summary: 'Documents of the knowledge base, or with ?query= the best chunks ranked by hybrid search',
    auth: 'any',
    params: NameParams,
    query: lazySchema(() => PageQuery.extend({
      project: z.string().optional(),
      query: z.string().min(1).max(KNOWLEDGE_LIMITS.queryChars).optional(),
      top_k: z.string().regex(/^\d+$/, 'must be a whole number').optional(),
    })),
    status: 200,
    response: lazySchema(() => z.union([KnowledgeListResponse, KnowledgeSearchResponse])),
  }),
  add: route({
    id: 'knowledge.add',
    method: 'POST',
    path: '/v1/agents/{name}/knowledge',
    summary: 'Add documents (text with a source name): chunked, indexed for full-text and, with an embedding endpoint, vector search',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({
      documents: z
        .array(z.strictObject({ source: z.string().min(1).max(KNOWLEDGE_LIMITS.sourceChars), text: z.string().min(1) }))
        .min(1)
        .max(KNOWLEDGE_LIMITS.documentsPerAdd),
    })),
    bodyLimit: KNOWLEDGE_LIMITS.addBytes,
    status: 201,
    response: lazySchema(() => z.object({ agent: z.string(), documents: z.array(KnowledgeDocument), chunks: z.number().int() })),
  }),
  empty: route({
    id: 'knowledge.empty',
    method: 'DELETE',
    path: '/v1/agents/{name}/knowledge',
    summary: 'Empty the knowledge base',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), deleted_documents: z.number().int(), deleted_chunks: z.number().int() })),
  }),
  deleteOne: route({
    id: 'knowledge.delete',
    method: 'DELETE',
    path: '/v1/agents/{name}/knowledge/{id}',
    summary: 'Delete one document and its chunks',
    auth: 'any',
    params: DocParams,
    query: ProjectQuery,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), document: KnowledgeDocument, deleted: z.literal(true) })),
  }),
};
