#!/usr/bin/env node
// Fast path: `--version` needs no command loading (keeps it close to bare node start-up).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`platform/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (argv[0] === '__complete') {
  // Every TAB of the shell scripts of `platform completion` lands here: without oclif, it answers in
  // about the time node takes to start.
  const [{ runComplete }, { fileURLToPath }] = await Promise.all([import('../dist/cli-bundle/cli/completion/main.js'), import('node:url')]);
  await runComplete(argv.slice(1), fileURLToPath(new URL('..', import.meta.url)));
} else {
  // Node 22.1+ keeps the compiled code of the bundle between runs (a no-op on older Node).
  const { default: nodeModule } = await import('node:module');
  nodeModule.enableCompileCache?.();
  // oclif and every command are bundled (scripts/bundle-cli.mjs): a command loads a few files, not
  // hundreds, and oclif reads the manifest of that command only (src/cli/quick-start.ts).
  const [{ startCli }, { fileURLToPath }] = await Promise.all([import('../dist/cli-bundle/oclif.js'), import('node:url')]);
  await startCli(argv, fileURLToPath(new URL('..', import.meta.url)));
}
