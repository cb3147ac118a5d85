// Writes what the CLI's quick start reads instead of the whole manifest (src/cli/quick-start.ts):
// an index of the command ids (with aliases, and whether each takes positional arguments, which
// decides how oclif reads `platform a b c`) and one small manifest per command. oclif parses its
// 340 KB manifest and builds every command's entry at each start; a command needs its own only.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const OUT = 'dist/cli-bundle/quick';
const manifest = JSON.parse(readFileSync('oclif.manifest.json', 'utf8'));
const pjson = JSON.parse(readFileSync('package.json', 'utf8'));
// The quick start runs no hook but the ones oclif runs for a found command (none of ours): a new
// hook must be taught to it, or it would be skipped silently.
const hooks = Object.keys(pjson.oclif.hooks ?? {}).filter((h) => h !== 'command_not_found');
if (hooks.length) throw new Error(`quick-manifests: the quick start does not run the ${hooks.join(', ')} hook(s); extend src/cli/quick-start.ts`);

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const commands = {};
const aliases = {};
for (const [id, c] of Object.entries(manifest.commands)) {
  commands[id] = c.strict === false || Object.keys(c.args ?? {}).length > 0 ? 1 : 0;
  for (const a of [...(c.aliases ?? []), ...(c.hiddenAliases ?? [])]) aliases[a] = id;
  const file = join(OUT, `${id.split(':').join('/')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ version: manifest.version, commands: { [id]: c } }));
}
writeFileSync(join(OUT, 'index.json'), JSON.stringify({ version: manifest.version, commands, aliases }));
