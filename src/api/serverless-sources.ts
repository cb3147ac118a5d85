// The serverless contract's plain helpers, apart from its zod schemas so the CLI can use them without loading zod.

/** The variable a secret lands in: env_name, else the secret name upper-cased with - as _ (prefixed _ when it starts with a digit). */
export function secretEnvName(e: { secret_name?: string; env_name?: string }): string {
  if (e.env_name) return e.env_name;
  const n = (e.secret_name ?? '').toUpperCase().replace(/-/g, '_');
  return /^[0-9]/.test(n) ? `_${n}` : n;
}

/**
 * How a source folder (`platform services deploy DIR`) becomes a server: the first runtime whose
 * entry file is at the folder's top level. One table for the CLI's check before upload and the
 * daemon's build, so both always agree.
 */
export const SERVER_ENTRIES: { runtime: 'go' | 'nodejs' | 'python' | 'ruby'; looksFor: string; found: (names: string[]) => string | undefined }[] = [
  { runtime: 'go', looksFor: 'go.mod or a .go file', found: (n) => (n.includes('go.mod') ? 'go.mod' : n.find((f) => f.endsWith('.go') && !f.endsWith('_test.go'))) },
  { runtime: 'nodejs', looksFor: 'package.json or index.js', found: (n) => ['package.json', 'index.js'].find((f) => n.includes(f)) },
  { runtime: 'python', looksFor: 'main.py or requirements.txt', found: (n) => ['main.py', 'requirements.txt'].find((f) => n.includes(f)) },
  { runtime: 'ruby', looksFor: 'app.rb or Gemfile', found: (n) => ['app.rb', 'Gemfile'].find((f) => n.includes(f)) },
];
