import { request } from '../../lazy/modules.js';
import { FACT_CHARS_MAX, type MemoryPolicy } from '../../../api/sessions.js';

/**
 * Turning a session into memories. With a platform model configured (an OpenAI-compatible
 * endpoint) the model is asked for facts; without one a deterministic extractor runs, so memorize
 * works offline and gives the same answer for the same session (docs/decisions/sessions.md):
 *
 * each user message is split into sentences (on . ! ? before a space or the end, and on new
 * lines); a sentence is a fact when, after dropping a leading "please remember (that)" /
 * "remember (that)" / "note that", it starts with a first-person statement: "I ", "I'm ", "I am ", "I've ", "My ", "We ", "Our ", or
 * "Call me ". Facts keep their wording (first letter upper-cased, ending with a period) and
 * duplicates (case- and space-insensitive) are dropped. The policy then filters them (memory.ts:
 * exclude_sensitive, topics through `aboutTopics`).
 */

export interface TranscriptTurn {
  message: string;
  output: string;
}

export interface ModelEndpoint {
  baseUrl: string;
  model: string;
  apiKey: string;
}

/** A . ! or ? followed by a space or the end, or a new line: "ada@example.com" and "1.8 m" stay whole. */
const SENTENCE_END = /[.!?]+(?=\s|$)|\n+/;
const LEAD = /^(please\s+)?(remember|note)\s+(that\s+)?/i;
const FIRST_PERSON = /^(i|i'm|i am|i've|my|we|our|call me)\b/i;

export function deterministicFacts(turns: TranscriptTurn[]): string[] {
  const out: string[] = [];
  for (const t of turns) {
    for (const raw of t.message.split(SENTENCE_END)) {
      const sentence = raw.trim().replace(LEAD, '').trim();
      if (sentence.length < 3 || !FIRST_PERSON.test(sentence)) continue;
      out.push(tidy(sentence));
    }
  }
  return dedupe(out);
}

/** Asks the model for the user's durable facts as JSON; a reply that is not the asked shape is an error. */
export async function modelFacts(endpoint: ModelEndpoint, turns: TranscriptTurn[], policy: ExtractionPolicy, signal?: AbortSignal): Promise<string[]> {
  const transcript = turns.map((t, i) => `Turn ${i + 1}\nUser: ${t.message}\nAgent: ${t.output}`).join('\n\n');
  const res = await request(`${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}) },
    body: JSON.stringify({
      model: endpoint.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: extractionPrompt(policy) },
        { role: 'user', content: transcript },
      ],
    }),
    signal,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`model endpoint answered ${res.statusCode}: ${text.slice(0, 300)}`);
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content;
    const facts = (JSON.parse(String(content)) as { facts?: unknown }).facts;
    if (!Array.isArray(facts) || facts.some((f) => typeof f !== 'string')) throw new Error('facts is not a list of strings');
    return dedupe((facts as string[]).map((f) => f.trim()).filter(Boolean).map(tidy));
  } catch (e) {
    throw new Error(`model endpoint answered without {"facts": [...]}: ${(e as Error).message}`);
  }
}

/** The policy fields that shape extraction. */
export type ExtractionPolicy = Pick<MemoryPolicy, 'exclude_sensitive' | 'topics' | 'instructions'>;

const BASE_PROMPT =
  'Extract durable facts about the user from this conversation (preferences, names, circumstances) that would help in later conversations. Answer only with JSON: {"facts": ["...", ...]}; each fact one short sentence; no facts: {"facts": []}.';

/**
 * The system prompt of model extraction: the base request, then the policy's rules in the order a
 * memory bank's generation config reads (what to leave out, the topics to keep, the owner's own
 * instructions last so they can refine the rest).
 */
export function extractionPrompt(policy: ExtractionPolicy): string {
  const parts = [BASE_PROMPT];
  if (policy.exclude_sensitive) {
    parts.push('Never include secrets or personal identifiers, even when the user states them: passwords, PINs, API keys, tokens, private keys, payment card or bank numbers, email addresses.');
  }
  if (policy.topics.length) parts.push(`Keep only facts about these topics:\n${policy.topics.map((t) => `- ${t}`).join('\n')}`);
  if (policy.instructions.trim()) parts.push(`Instructions from the agent's owner:\n${policy.instructions.trim()}`);
  return parts.join('\n\n');
}

/**
 * Whether a fact is about one of the topics, for the deterministic extractor: the fact and each
 * topic are reduced to their terms (`terms`: lower-case words, stop words out, a plural's trailing
 * s dropped); a topic matches when any of its terms is a term of the fact, or begins one when the
 * topic term has 4 letters or more ("travel" matches "travelling"). No topics: every fact matches.
 */
export function aboutTopics(fact: string, topics: readonly string[]): boolean {
  if (!topics.length) return true;
  const have = terms(fact);
  return topics.some((topic) => terms(topic).some((t) => have.some((f) => f === t || (t.length >= 4 && f.startsWith(t)))));
}

function tidy(s: string): string {
  const t = s.replace(/\s+/g, ' ').slice(0, FACT_CHARS_MAX - 1);
  return t.charAt(0).toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? '' : '.');
}

export const factKey = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();

function dedupe(facts: string[]): string[] {
  const seen = new Set<string>();
  return facts.filter((f) => {
    const k = factKey(f);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const STOP = new Set('a an and are as at be but by do for from has have i i\'m is it me my of on or our so that the their there this to was we what when where which who why will with you your'.split(' '));

/** The words relevance ranking compares: lower-cased, stop words out, a plural's trailing s dropped. */
export function terms(text: string): string[] {
  const out = new Set<string>();
  for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (!w || STOP.has(w)) continue;
    out.add(w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w);
  }
  return [...out];
}
