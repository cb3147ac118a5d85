// Bundles the daemon's own modules into one file (dist/daemon/daemon.bundle.js). Loading ~250
// small ES modules cost more start-up time than running them; packages stay external (native
// addons, lazily loaded dockerode and undici). The CLI starts the bundle when it exists.
import { build } from 'esbuild';

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

/**
 * CommonJS packages the daemon loads at every start, required rather than imported: an ES import
 * of a CommonJS module runs node's export lexer over its sources first (~70 ms of the start's
 * CPU for these three, measured). Only default imports of them exist (a named one fails the
 * build here: no matching export), and the default import of CommonJS is its module.exports.
 */
const REQUIRED_AT_START = ['better-sqlite3', 'ipaddr.js', 'hnswlib-node'];

const requireCommonJs = {
  name: 'require-commonjs',
  setup(b) {
    const names = new RegExp(`^(${REQUIRED_AT_START.map((n) => n.replace(/[.]/g, '\\.')).join('|')})$`);
    b.onResolve({ filter: names }, (a) => ({ path: a.path, namespace: 'require-commonjs' }));
    b.onLoad({ filter: /.*/, namespace: 'require-commonjs' }, (a) => ({
      contents: `import { createRequire } from 'node:module';\nexport default createRequire(import.meta.url)(${JSON.stringify(a.path)});\n`,
      loader: 'js',
      resolveDir: process.cwd(),
    }));
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

await build({
  entryPoints: ['dist/daemon/main.js'],
  outfile: 'dist/daemon/daemon.bundle.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  plugins: [zodOnFirstUse, requireCommonJs],
  logLevel: 'warning',
});
