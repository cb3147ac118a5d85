// Bundles the CLI: every command, the hook and the completion entry, with @oclif/core, zod and the
// other pure-JS packages they use, into dist/cli-bundle (one file per command plus shared chunks).
// Resolving and loading some 300 small modules cost each command more start-up time than running
// it (docs/decisions/speed-cli.md). Native addons and the lazily loaded packages stay external.
// The daemon's modules (loaded in-process by `server start` only) stay the tsc tree in dist/daemon,
// reached through the package's own `#platform-daemon/*` import map, wherever the chunk lands.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';

const OUT = 'dist/cli-bundle';
const walk = (dir) => readdirSync(dir).flatMap((f) => {
  const p = join(dir, f);
  return statSync(p).isDirectory() ? walk(p) : p.endsWith('.js') ? [p] : [];
});

const daemonTree = {
  name: 'daemon-tree',
  setup(b) {
    const daemonDir = resolve('dist/daemon');
    b.onResolve({ filter: /daemon\// }, (args) => {
      if (!args.path.startsWith('.')) return undefined;
      const rel = relative(daemonDir, resolve(args.resolveDir, args.path));
      if (rel.startsWith('..')) return undefined;
      return { path: `#platform-daemon/${rel.split(sep).join('/')}`, external: true };
    });
  },
};

// Patches of oclif's start-up path, each checked to still apply.
const PATCHES = [
  // The logger loads the debug package at every start to print nothing unless DEBUG is set.
  {
    file: /@oclif[\\/]core[\\/]lib[\\/]logger\.js$/,
    from: 'const debug = (0, debug_1.default)(namespace);',
    to: 'const debug = process.env.DEBUG ? (0, debug_1.default)(namespace) : Object.assign(function () {}, { enabled: false, namespace });',
  },
  // The engine check loads semver (47 modules) at every start; npm already enforces package.json's engines.
  {
    file: /@oclif[\\/]core[\\/]lib[\\/]index\.js$/,
    from: 'function checkNodeVersion() {',
    to: 'function checkNodeVersion() {\n    return;',
  },
  // oclif sorts its ~200 commands with localeCompare at every start: the first call builds an ICU
  // collator (~20-35 ms measured). Command ids are ASCII, so a code-unit order is the same order.
  {
    file: /@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/,
    from: '.sort((a, b) => a.id.localeCompare(b.id))',
    to: '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))',
  },
];

// oclif's modules require everything at the top (each other, Node's child_process and os, a glob
// library, a template engine, a debug logger, text wrapping for help and errors), and its index
// loads every module: each command paid for all of them at start. A required module now loads the
// first time one of its exports is read. TypeScript's CommonJS output reads them only as properties
// (`x_1.default`, `(0, x_1.name)(...)`, re-export getters), which a Proxy can defer.
const TOP_REQUIRE = /^(?:const|var) (\w+) = (__importDefault\(|__importStar\()?require\(("[^"]+")\)\)?;$/gm;
const lazyRequires = (text) =>
  text.replace(TOP_REQUIRE, (line, name, wrap, spec) => {
    const load = wrap ? `${wrap}require(${spec}))` : `require(${spec})`;
    const target = `(${name}__loaded ??= ${load})`;
    return `let ${name}__loaded; const ${name} = new Proxy({}, { get: (_, key) => ${target}[key], has: (_, key) => key in ${target}, ownKeys: () => Reflect.ownKeys(${target}), getOwnPropertyDescriptor: (_, key) => { const d = Reflect.getOwnPropertyDescriptor(${target}, key); return d && { ...d, configurable: true }; } });`;
  });

const patches = {
  name: 'patches',
  setup(b) {
    b.onLoad({ filter: /@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      for (const p of PATCHES.filter((p) => p.file.test(args.path))) {
        if (!text.includes(p.from)) throw new Error(`bundle-cli: ${args.path} no longer contains ${p.from}; review the patch`);
        text = text.replaceAll(p.from, p.to);
      }
      return { contents: lazyRequires(text), loader: 'js' };
    });
  },
};

// The contract modules (dist/api) build zod schemas at import: loading zod and them cost a request
// command more than the rest of its start. What most commands take from them is data: route tables
// (method, path, status) and constants. Each module's data is written as a zod-free twin in
// dist/cli-routes; an import of the CLI that asks only for such names is pointed at the twin, and
// any other (a schema, a function) keeps the real module. One source of truth: the twins are
// generated from the real modules at every build.
const SCHEMA_FIELDS = ['params', 'query', 'body', 'response'];
const ROUTES_DIR = 'dist/cli-routes';

function serialize(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (v instanceof RegExp) return v.toString();
  if (Array.isArray(v)) {
    const items = v.map(serialize);
    return items.includes(null) ? null : `[${items.join(', ')}]`;
  }
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype && !('_zod' in v)) {
    const fields = Object.entries(v).map(([k, x]) => [k, serialize(x)]);
    return fields.some(([, x]) => x === null) ? null : `{ ${fields.map(([k, x]) => `${JSON.stringify(k)}: ${x}`).join(', ')} }`;
  }
  return null;
}

const isRoute = (v) => v && typeof v === 'object' && typeof v.method === 'string' && typeof v.path === 'string' && 'response' in v;

/** A route without its schemas; reading one is a bundling mistake, said loudly rather than undefined. */
function serializeRoute(r) {
  const data = Object.fromEntries(Object.entries(r).filter(([k]) => !SCHEMA_FIELDS.includes(k)));
  const guards = SCHEMA_FIELDS.map((f) => `get ${f}() { return schemaless(${JSON.stringify(r.id ?? r.path)}, ${JSON.stringify(f)}); }`);
  const body = serialize(data);
  return body === null ? null : `{ ${body.slice(2, -2)}, ${guards.join(', ')} }`;
}

/** Writes the twins; returns, per module path, the names its twin exports. */
async function writeTwins() {
  rmSync(ROUTES_DIR, { recursive: true, force: true });
  mkdirSync(ROUTES_DIR, { recursive: true });
  const twins = new Map();
  for (const f of readdirSync('dist/api').filter((f) => f.endsWith('.js'))) {
    const mod = await import(pathToFileURL(resolve('dist/api', f)).href);
    const lines = [];
    const names = new Set();
    for (const [name, value] of Object.entries(mod)) {
      let text = null;
      if (value && typeof value === 'object' && !('_zod' in value) && Object.values(value).length > 0 && Object.values(value).every(isRoute)) {
        const entries = Object.entries(value).map(([k, r]) => [k, serializeRoute(r)]);
        if (entries.every(([, x]) => x !== null)) text = `{\n${entries.map(([k, x]) => `  ${JSON.stringify(k)}: ${x},`).join('\n')}\n}`;
      } else if (typeof value !== 'function') text = serialize(value);
      if (text === null) continue;
      lines.push(`export const ${name} = ${text};`);
      names.add(name);
    }
    const head = `// Generated by scripts/bundle-cli.mjs from dist/api/${f}: its data without zod. Do not edit.\n` +
      `function schemaless(route, field) { throw new Error(\`the CLI's route table has no \${field} schema for \${route}: import it from src/api\`); }\n`;
    writeFileSync(join(ROUTES_DIR, f), head + lines.join('\n') + '\n');
    twins.set(resolve('dist/api', f), names);
  }
  return twins;
}

/** The names an import statement of `importer` takes from `specifier`; undefined when it takes the namespace (`* as x`, `export *`). */
function importedNames(importer, specifier) {
  const text = readFileSync(importer, 'utf8');
  const esc = specifier.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const names = [];
  for (const m of text.matchAll(new RegExp(`(?:import|export)\\s*(\\*(?:\\s*as\\s*\\w+)?|\\{[^}]*\\})\\s*from\\s*['"]${esc}['"]`, 'g'))) {
    if (m[1].startsWith('*')) return undefined;
    for (const part of m[1].slice(1, -1).split(',')) if (part.trim()) names.push(part.trim().split(/\s+as\s+/)[0]);
  }
  // A dynamic import takes the whole module, unless it only reads names: `(await import('x')).name`.
  const dynamic = [...text.matchAll(new RegExp(`import\\(\\s*['"]${esc}['"]\\s*\\)(\\)\\.(\\w+))?`, 'g'))];
  if (dynamic.some((m) => !m[2] || !text.slice(Math.max(0, m.index - 7), m.index).endsWith('(await '))) return undefined;
  return [...names, ...dynamic.map((m) => m[2])];
}

const twins = await writeTwins();
const routeTwins = {
  name: 'route-twins',
  setup(b) {
    b.onResolve({ filter: /\/api\/[\w-]+\.js$/ }, (args) => {
      if (!args.path.startsWith('.') || !args.importer || args.importer.startsWith(resolve('dist/api'))) return undefined;
      const target = resolve(args.resolveDir, args.path);
      const names = twins.get(target);
      const wanted = names && importedNames(args.importer, args.path);
      if (!wanted || !wanted.every((n) => names.has(n))) {
        if (process.env.BUNDLE_CLI_EXPLAIN && names) console.error(`${relative('.', args.importer)} takes ${wanted ? wanted.filter((n) => !names.has(n)).join(', ') : 'the whole module'} from ${args.path}: the real module is bundled`);
        return undefined;
      }
      return { path: resolve(ROUTES_DIR, basename(target)) };
    });
  },
};

// Packages platform does not ship that code in the bundle may try to load: ink's devtools (only
// when DEV=true) and TypeScript (oclif reads a plugin's tsconfig with it in development). A stub
// says so instead of leaving an import of a package that is not installed; both callers take the
// failure as "not there".
const NOT_SHIPPED = {
  'react-devtools-core': 'the React devtools (DEV=true) are not part of platform',
  typescript: 'TypeScript is not part of platform',
};
const notShipped = {
  name: 'not-shipped',
  setup(b) {
    b.onResolve({ filter: /^(react-devtools-core|typescript)$/ }, (args) => ({ path: args.path, namespace: 'not-shipped' }));
    b.onLoad({ filter: /.*/, namespace: 'not-shipped' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(NOT_SHIPPED[args.path])});`,
      loader: 'js',
    }));
  },
};

// The core: oclif and every command that needs neither a terminal UI (ink, react), zod nor the
// daemon's modules, with the quick start, as one CommonJS script that src/cli/core-loader.ts loads
// through V8's code cache. Compiling oclif's 800 KB and a command's modules, and the ES module
// loader's work per file, cost every start more than running the command. Its file name carries a
// hash of its content, which keys the cache. The other commands (and oclif's full start, for help)
// load as ES modules from the split bundle below, their oclif being the core's (#platform-oclif).
const CORE_EXCLUDES = /^(ink|react|zod)(\/|$)|^#platform-daemon\//;
const commandFiles = walk('dist/commands');
const commandId = (file) => relative('dist/commands', file).replace(/\.js$/, '').split(sep).join(':');

/** Dynamic imports of what the core does not bundle go through the ES module that loads it: code run by vm.Script has no import() of its own. */
const OCLIF_IMPORTS = {
  name: 'oclif-imports',
  setup(b) {
    b.onLoad({ filter: /(@oclif[\\/]core[\\/]lib[\\/](module-loader|config[\\/]ts-path)|lilconfig[\\/]src[\\/]index)\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('await import(')) throw new Error(`bundle-cli: ${args.path} no longer contains \`await import(\`; review the patch`);
      const routed = text.replaceAll('await import(', 'await __dynamicImport(');
      return { contents: args.path.includes('@oclif') ? lazyRequires(routed) : routed, loader: 'js' };
    });
  },
};
const coreExcludes = {
  name: 'core-excludes',
  setup(b) {
    b.onResolve({ filter: /^(ink|react|zod)(\/.*)?$/ }, (args) => ({ path: args.path, external: true }));
  },
};

async function buildCore(files) {
  writeFileSync(
    'dist/cli/core-entry.js',
    `// Generated by scripts/bundle-cli.mjs. Do not edit.\n` +
      `import * as oclif from '@oclif/core';\n` +
      `import { start } from './quick-start.js';\n` +
      `const commands = {\n${files.map((f) => `  ${JSON.stringify(commandId(f))}: () => import(${JSON.stringify(`../commands/${relative('dist/commands', f).split(sep).join('/')}`)}),`).join('\n')}\n};\n` +
      `export { oclif };\n` +
      `export const startCli = (argv, root) => start(argv, root, commands);\n`,
  );
  return build({
    entryPoints: ['dist/cli/core-entry.js'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    metafile: true,
    outfile: join(OUT, 'core.cjs'),
    // The modules are ES modules; in the core, their import.meta.url is the core's own file (src/v8-code-cache.ts).
    define: { 'import.meta.url': '__importMetaUrl' },
    external: ['@napi-rs/keyring', 'better-sqlite3', 'usearch', 'hnswlib-node', 'dockerode', 'undici'],
    plugins: [daemonTree, routeTwins, coreExcludes, OCLIF_IMPORTS, patches, notShipped],
    logLevel: 'warning',
  });
}

/** Commands whose modules reach an import the core leaves out, from a first build of them all. */
function commandsNeedingModules(metafile) {
  const inputs = metafile.inputs;
  const reaches = new Map();
  const visit = (path) => {
    if (reaches.has(path)) return reaches.get(path);
    reaches.set(path, false);
    const found = (inputs[path]?.imports ?? []).some((i) => (i.external ? CORE_EXCLUDES.test(i.path) : visit(i.path)));
    reaches.set(path, found);
    return found;
  };
  return new Set(commandFiles.filter((f) => visit(relative('.', f).split(sep).join('/'))));
}

rmSync(OUT, { recursive: true, force: true });
const excluded = commandsNeedingModules((await buildCore(commandFiles)).metafile);
const coreBuild = await buildCore(commandFiles.filter((f) => !excluded.has(f)));
// ASCII only (esbuild leaves raw characters in regular expressions): the loader reads it as latin1,
// a plain copy into a one-byte string, where UTF-8 decoding made a two-byte one of twice the size.
const coreText = coreBuild.outputFiles[0].text
  .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  .replace(/\bimport\((["'])([^"'./][^"']*)\1\)/g, (_, q, spec) => `__dynamicImport(${q}${spec}${q})`);
const stray = coreText.match(/.{0,60}\bimport\((?!\)).{0,60}/);
if (stray) throw new Error(`bundle-cli: the core still calls import() (${stray[0]}); route it through __dynamicImport`);
const leftOut = Object.values(coreBuild.metafile.outputs)[0].imports.filter((i) => CORE_EXCLUDES.test(i.path));
if (leftOut.length) throw new Error(`bundle-cli: the core imports ${leftOut.map((i) => i.path).join(', ')}`);
const coreHash = createHash('sha256').update(coreText).digest('hex');
const coreName = `core-${coreHash.slice(0, 16)}.cjs`;
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, coreName), coreText);
if (process.env.BUNDLE_CLI_EXPLAIN) console.error(`core: ${commandFiles.length - excluded.size} commands; left out: ${[...excluded].map(commandId).join(', ')}`);

// The core is loaded once per process, by core.cjs (required by bin/run.js, imported by the ES
// module face below): it runs the core through the code cache (src/cli/core-loader.ts).
await build({
  entryPoints: ['dist/cli/core-loader.js'],
  outfile: join(OUT, 'core-loader.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
});
writeFileSync(
  join(OUT, 'core.cjs'),
  `// Generated by scripts/bundle-cli.mjs. Do not edit.\n` +
    `'use strict';\n` +
    `module.exports = require('./core-loader.cjs').loadCore(require('node:path').join(__dirname, ${JSON.stringify(coreName)}), ${JSON.stringify(coreHash)}, (specifier) => import(specifier));\n`,
);
// Its ES module face, for the commands outside the core and oclif's full start: every export of
// @oclif/core, from the core. Their imports of @oclif/core point at it through the package's own
// import map (#platform-oclif), so one oclif serves a process.
const { createRequire } = await import('node:module');
const oclifExports = Object.keys(createRequire(import.meta.url)('@oclif/core')).filter((k) => k !== 'default' && k !== '__esModule');
writeFileSync(
  'dist/cli/oclif-entry.js',
  `// Generated by scripts/bundle-cli.mjs. Do not edit.\n` +
    `import core from '#platform-cli-core';\n` +
    `export default core.oclif;\n` +
    `export const { ${oclifExports.join(', ')} } = core.oclif;\n`,
);
const oclifShim = {
  name: 'oclif-shim',
  setup(b) {
    b.onResolve({ filter: /^@oclif\/core$/ }, () => ({ path: '#platform-oclif', external: true }));
    b.onResolve({ filter: /^#platform-cli-core$/ }, (args) => ({ path: args.path, external: true }));
  },
};

await build({
  entryPoints: [
    ...commandFiles,
    'dist/hooks/command-not-found.js',
    'dist/cli/completion/main.js',
    { in: 'dist/cli/oclif-entry.js', out: 'oclif' },
  ],
  outdir: OUT,
  outbase: 'dist',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Native addons, and packages loaded only on rare paths (their own lazy import keeps them off start-up).
  external: ['@napi-rs/keyring', 'better-sqlite3', 'usearch', 'hnswlib-node', 'dockerode', 'undici'],
  // CommonJS packages inside ES module chunks still call require and read __filename.
  banner: { js: "import { createRequire as __platformRequire } from 'node:module'; const require = __platformRequire(import.meta.url);" },
  plugins: [daemonTree, routeTwins, oclifShim, notShipped],
  logLevel: 'warning',
});
