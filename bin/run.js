#!/usr/bin/env node
'use strict';
// CommonJS (bin/package.json): a command that runs from the CLI's core loads no ES module at all,
// which spares node's ES module loader its start (docs/decisions/speed-cli.md).
const { join } = require('node:path');

const argv = process.argv.slice(2);
const root = join(__dirname, '..');
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // Fast path: `--version` needs no command loading (keeps it close to bare node start-up).
  const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8'));
  process.stdout.write(`platform/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (argv[0] === '__complete') {
  // Every TAB of the shell scripts of `platform completion` lands here: without oclif, it answers in
  // about the time node takes to start.
  import('../dist/cli-bundle/cli/completion/main.js').then(({ runComplete }) => runComplete(argv.slice(1), root));
} else {
  // Node 22.1+ keeps the compiled code of the ES module bundle between runs (a no-op on older Node).
  require('node:module').enableCompileCache?.();
  // oclif and most commands are one script loaded through a V8 code cache (scripts/bundle-cli.mjs),
  // and oclif reads the manifest of the command typed only (src/cli/quick-start.ts).
  require('../dist/cli-bundle/core.cjs').startCli(argv, root);
}
