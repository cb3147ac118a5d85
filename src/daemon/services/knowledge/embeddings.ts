import type { DaemonConfig } from '../../config.js';
import { ApiError } from '../../http/errors.js';
import { normalized } from '../vector/scoring.js';

/** Texts per request to the embedding endpoint (OpenAI accepts up to 2048; stubs and small servers less). */
const BATCH = 64;
const TIMEOUT_MS = 30_000;

export interface Embedder {
  model: string;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/**
 * The platform's embedding endpoint (PLATFORM_EMBED_BASE_URL, else PLATFORM_MODEL_BASE_URL, with
 * PLATFORM_EMBED_MODEL): an OpenAI-compatible `POST {base}/embeddings`. Undefined when not
 * configured: knowledge is then full-text only. Vectors come back normalised, so a dot product
 * is their cosine.
 */
export function platformEmbedder(config: DaemonConfig): Embedder | undefined {
  const m = config.workloads.model;
  const base = (m.embedBaseUrl || m.baseUrl).replace(/\/+$/, '');
  if (!base || !m.embedModel) return undefined;
  return {
    model: m.embedModel,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) out.push(...(await embedBatch(base, m.embedModel, m.apiKey, texts.slice(i, i + BATCH))));
      return out;
    },
  };
}

async function embedBatch(base: string, model: string, apiKey: string, input: string[]): Promise<Float32Array[]> {
  let res: Response;
  try {
    res = await fetch(`${base}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ model, input }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    throw embeddingFailed(`unreachable (${(e as Error).message})`);
  }
  if (!res.ok) throw embeddingFailed(`answered ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as { data?: Array<{ index?: number; embedding?: unknown }> } | undefined;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== input.length) throw embeddingFailed('answered without one embedding per input');
  const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const dims = Array.isArray(ordered[0]?.embedding) ? (ordered[0]!.embedding as unknown[]).length : 0;
  return ordered.map((d) => {
    const v = d.embedding;
    if (!Array.isArray(v) || v.length !== dims || dims === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw embeddingFailed('answered an embedding that is not a list of numbers of one length');
    }
    return normalized(v as number[]);
  });
}

const embeddingFailed = (why: string) => new ApiError(502, `the embedding endpoint ${why}: nothing was added`);
