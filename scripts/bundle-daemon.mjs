// Bundles the daemon's own modules into one script (dist/daemon/daemon.code.cjs) and its loader
// (dist/daemon/daemon.bundle.js, src/daemon/code-cache.ts), which runs it through a V8 code cache.
// Loading ~250 small ES modules cost more start-up time than running them; packages stay external
// (native addons, lazily loaded dockerode and undici). The CLI starts the bundle when it exists.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { build, transform } from 'esbuild';

/**
 * zod on first use (docs/decisions/speed-daemon.md, "Start"): the route schemas are built on
 * first use (src/api/lazy.ts) and the daemon builds none of its own, so nothing before the first
 * validated request needs zod, whose ~90 ES modules cost ~50-100 ms and ~5 MiB at every start.
 * In the bundle, `zod` is this module: `z` stands for zod's namespace and loads zod at the first
 * property read; `ZodError` and `globalRegistry` likewise. Everything in the bundle goes through
 * it, so there is one zod instance in the daemon. What it loads is zod bundled into one CommonJS
 * file beside the daemon's (a synchronous require of one file: the first validated request
 * would otherwise read and compile zod's ~90 files).
 */
const ZOD_ON_FIRST_USE = `
import { createRequire } from 'node:module';
let zod;
const load = () => (zod ??= createRequire(import.meta.url)('./zod.bundle.cjs'));
const standIn = (of) => new Proxy({}, {
  get: (_, key) => Reflect.get(of(), key),
  has: (_, key) => Reflect.has(of(), key),
  ownKeys: () => Reflect.ownKeys(of()),
  getOwnPropertyDescriptor: (_, key) => { const d = Reflect.getOwnPropertyDescriptor(of(), key); return d && { ...d, configurable: true }; },
});
export const z = standIn(() => load().z);
export const globalRegistry = standIn(() => load().globalRegistry);
// Only \`instanceof ZodError\` is used: no error can be a ZodError before zod is loaded.
export const ZodError = { [Symbol.hasInstance]: (value) => zod !== undefined && value instanceof zod.ZodError };
`;

const zodOnFirstUse = {
  name: 'zod-on-first-use',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, () => ({ path: 'zod-on-first-use', namespace: 'zod-on-first-use' }));
    b.onLoad({ filter: /.*/, namespace: 'zod-on-first-use' }, () => ({ contents: ZOD_ON_FIRST_USE, loader: 'js', resolveDir: process.cwd() }));
  },
};

await build({
  stdin: { contents: "export { z, ZodError, globalRegistry } from 'zod';", resolveDir: process.cwd(), loader: 'js' },
  outfile: 'dist/daemon/zod.bundle.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
});

/**
 * The daemon's code is a classic script, not an ES module: vm.Script takes a V8 code cache
 * (`cachedData`) only for those, and node 20 has no compile cache for modules
 * (src/daemon/code-cache.ts). esbuild writes it as CommonJS, which the loader wraps as node's
 * CommonJS loader does, with two more names for what CommonJS lacks: `import.meta.url` becomes
 * `__importMetaUrl`, and each `import("…")` (of packages, all external) becomes
 * `__dynamicImport("…")`, the loader's own import(): import() inside a vm.Script needs a callback
 * node 20 allows only behind --experimental-vm-modules. Being CommonJS, the packages the daemon
 * loads at every start (better-sqlite3, ipaddr.js, hnswlib-node) are required, which also skips
 * the export lexer an ES import of CommonJS runs (~70 ms of CPU for these three, measured).
 */
const code = await build({
  entryPoints: ['dist/daemon/daemon-main.js'],
  outfile: 'dist/daemon/daemon.code.cjs',
  write: false,
  metafile: true,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  packages: 'external',
  define: { 'import.meta.url': '__importMetaUrl' },
  plugins: [zodOnFirstUse],
  logLevel: 'warning',
});
const dynamicImports = Object.values(code.metafile.outputs)[0].imports.filter((i) => i.kind === 'dynamic-import').length;
let rewritten = 0;
const body = code.outputFiles[0].text.replace(/\bimport\("/g, () => (rewritten++, '__dynamicImport("'));
// Each rewritten text must be one of esbuild's dynamic imports: no string that merely reads
// `import("` may change.
if (rewritten !== dynamicImports) throw new Error(`daemon code: ${dynamicImports} dynamic imports but ${rewritten} "import(" texts rewritten`);
if (/\bimport\.meta\b/.test(body)) throw new Error('daemon code: import.meta left in a CommonJS body');

/**
 * ASCII only, so the loader reads it as latin1 into a one-byte string: node 20 decodes 1.2 MB of
 * UTF-8 with a few characters above ASCII in ~4-10 ms into a two-byte string (2.5 MB kept for the
 * daemon's life), latin1 in under 1 ms. esbuild already escapes every string, template and
 * identifier (its default charset is ASCII); what it leaves is in comments it keeps (`§`, `→`),
 * escaped here as text. Checked: minified without comments, the code is the same before and after.
 */
const ascii = body.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
if (ascii !== body) {
  const bare = (text) => transform(text, { minify: true, legalComments: 'none', loader: 'js', format: 'cjs' }).then((r) => r.code);
  if ((await bare(ascii)) !== (await bare(body))) throw new Error('daemon code: a character above ASCII outside a comment');
}
writeFileSync('dist/daemon/daemon.code.cjs', ascii);

await build({
  entryPoints: ['dist/daemon/code-cache.js'],
  outfile: 'dist/daemon/daemon.bundle.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  define: { DAEMON_CODE_SHA256: JSON.stringify(createHash('sha256').update(ascii).digest('hex')) },
  logLevel: 'warning',
});
