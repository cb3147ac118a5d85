/**
 * The CLI bundle (scripts/bundle-cli.mjs): the zod-free route tables it points most commands at
 * must say exactly what the contract says, and a request command must not load zod at start.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const TWINS = join(ROOT, 'dist', 'cli-routes');
const BUNDLE = join(ROOT, 'dist', 'cli-bundle');
const SCHEMAS = ['params', 'query', 'body', 'response'];

const isRoute = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && typeof (v as { path?: unknown }).path === 'string' && 'response' in v;

describe('the route tables the CLI bundle uses instead of the zod contract', () => {
  it('hold every route of every contract module with the same method, path, status and rules, and every plain constant', async () => {
    const modules = readdirSync(join(ROOT, 'dist', 'api')).filter((f) => f.endsWith('.js'));
    let routes = 0;
    for (const f of modules) {
      const real = (await import(pathToFileURL(join(ROOT, 'dist', 'api', f)).href)) as Record<string, unknown>;
      const twin = (await import(pathToFileURL(join(TWINS, f)).href)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(twin)) {
        expect(real, `${f} ${name}`).toHaveProperty(name);
        const source = real[name];
        if (source && typeof source === 'object' && Object.values(source).every(isRoute)) {
          for (const [key, r] of Object.entries(source as Record<string, Record<string, unknown>>)) {
            const copy = (value as Record<string, Record<string, unknown>>)[key]!;
            for (const [field, v] of Object.entries(r)) if (!SCHEMAS.includes(field)) expect(copy[field], `${f} ${name}.${key}.${field}`).toEqual(v);
            routes++;
          }
        } else {
          expect(value, `${f} ${name}`).toEqual(source);
        }
      }
    }
    expect(routes).toBeGreaterThan(150);
  });

  it('say so loudly when code asks a table for a schema it does not carry', async () => {
    const { agentRoutes } = (await import(pathToFileURL(join(TWINS, 'agents.js')).href)) as { agentRoutes: Record<string, { body: unknown; path: string }> };
    expect(agentRoutes.list!.path).toBe('/v1/agents');
    expect(() => agentRoutes.deploy!.body).toThrow(/route table has no body schema for agents\.deploy: import it from src\/api/);
  });
});

/** Every file a bundled module loads at start (static imports, not dynamic ones). */
function startGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const m of readFileSync(file, 'utf8').matchAll(/^import (?:[^;]*? from )?"(\.[^"]+)"/gm)) startGraph(normalize(join(dirname(file), m[1]!)), seen);
  return seen;
}

describe('what a command loads at start', () => {
  it.each([['whoami'], ['agents/list'], ['invoke'], ['projects/list'], ['secrets/list'], ['logs']])('%s loads neither zod nor the contract modules', (command) => {
    const entry = join(BUNDLE, 'commands', `${command}.js`);
    expect(existsSync(entry), entry).toBe(true);
    const loaded = [...startGraph(entry)];
    expect(loaded.filter((f) => /\/\/ node_modules\/zod\//.test(readFileSync(f, 'utf8')))).toEqual([]);
  });
});
