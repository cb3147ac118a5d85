import { existsSync, readdirSync } from 'node:fs';
import { AbortError } from './errors.js';

/**
 * The handler file each function runtime's shim loads (src/daemon/runtimes: python/shim.py,
 * nodejs/shim.mjs, go/shim.go, ruby/shim.rb), in the order they are reported.
 */
const HANDLERS: { runtime: string; looksFor: string; found: (names: string[]) => string | undefined }[] = [
  { runtime: 'python', looksFor: 'main.py', found: (n) => (n.includes('main.py') ? 'main.py' : undefined) },
  { runtime: 'nodejs', looksFor: 'index.mjs, index.js or index.cjs', found: (n) => ['index.mjs', 'index.js', 'index.cjs'].find((f) => n.includes(f)) },
  { runtime: 'go', looksFor: 'a .go file', found: (n) => n.find((f) => f.endsWith('.go') && !f.endsWith('_test.go')) },
  { runtime: 'ruby', looksFor: 'handler.rb', found: (n) => (n.includes('handler.rb') ? 'handler.rb' : undefined) },
];

export interface Detected {
  framework: string;
  runtime?: string;
  /** What it was told by, for the progress line: "main.py". */
  by: string;
}

/**
 * What a directory without a platform.json (or with one that names no framework) deploys as: a
 * function when it holds one runtime's handler file. An agent framework is never guessed: its
 * files look like any Python program, and the wrong guess builds the wrong thing.
 */
export function detectWorkload(dir: string, runtime?: string): Detected {
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const candidates = HANDLERS.filter((h) => !runtime || h.runtime === runtime);
  const hits = candidates.map((h) => ({ h, file: h.found(names) })).filter((x) => x.file);
  if (hits.length === 1) return { framework: 'function', runtime: hits[0]!.h.runtime, by: hits[0]!.file! };
  if (hits.length > 1) {
    throw new AbortError(
      `${dir} holds handlers of several runtimes (${hits.map((x) => `${x.file} for ${x.h.runtime}`).join(', ')}) and no platform.json says which`,
      `pass --runtime ${hits.map((x) => x.h.runtime).join('|')}, or write platform.json: {"framework": "function", "runtime": "${hits[0]!.h.runtime}"}`,
    );
  }
  const looked = candidates.map((h) => `${h.looksFor} (${h.runtime})`).join(', ');
  throw new AbortError(
    `cannot tell what ${dir} deploys as: it has no platform.json and no function handler at its top (looked for ${looked})`,
    `for a function add its handler file; for an agent pass --framework adk|langgraph|crewai; or start from a template: \`platform init DIR --template function-python\``,
  );
}
