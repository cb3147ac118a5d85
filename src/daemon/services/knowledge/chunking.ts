import { KNOWLEDGE_LIMITS } from '../../../api/knowledge.js';

/**
 * Splits a document into chunks of at most `max` characters: paragraphs (blank-line separated)
 * are packed together while they fit, so a chunk keeps whole thoughts; a paragraph longer than
 * `max` is cut at the last whitespace before the limit (or hard at the limit when it has none).
 */
export function chunkText(text: string, max: number = KNOWLEDGE_LIMITS.chunkChars): string[] {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  const chunks: string[] = [];
  let current = '';
  const flush = () => {
    if (current) chunks.push(current);
    current = '';
  };
  for (const p of paragraphs.flatMap((p) => splitLong(p, max))) {
    if (current && current.length + 2 + p.length > max) flush();
    current = current ? `${current}\n\n${p}` : p;
  }
  flush();
  return chunks;
}

function splitLong(p: string, max: number): string[] {
  const out: string[] = [];
  let rest = p;
  while (rest.length > max) {
    const cut = rest.lastIndexOf(' ', max);
    const at = cut > max / 2 ? cut : max;
    out.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest) out.push(rest);
  return out;
}
