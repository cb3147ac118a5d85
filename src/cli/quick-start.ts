import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execute, Plugin, settings, type Command, type Interfaces } from '@oclif/core';

/**
 * The CLI's start. oclif's own start reads the whole manifest (340 KB, ~200 commands) and builds
 * every command's entry twice (once to find the command, again inside `Command.run`): about a third
 * of a one-request command's time. When the words typed name a command, the quick start hands oclif
 * a root plugin that knows that command only, from its own small manifest
 * (scripts/quick-manifests.mjs): oclif then parses, runs, reports errors and exits exactly as
 * usual. Help, topics, unknown commands and an empty line take oclif's full start.
 */

interface QuickIndex {
  version: string;
  /** Command id to 1 when it takes positional arguments (or any number of them). */
  commands: Record<string, 0 | 1>;
  aliases: Record<string, string>;
}

type PackageJson = Interfaces.PJSON & { oclif: { additionalHelpFlags?: string[] } };

/** A command's module, from the same bundle as this start (scripts/bundle-cli.mjs). */
export type BundledCommands = Record<string, () => Promise<{ default: unknown }>>;

export async function start(argv: string[], root: string, bundled: BundledCommands = {}): Promise<void> {
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  // The CLI runs its compiled bundle only: oclif's look-up of TypeScript sources (for plugins
  // developed in TypeScript, under NODE_ENV=development or test) has nothing to find.
  settings.enableAutoTranspile = false;
  const id = quickCommandId(argv, root, pjson);
  const loadOptions = id ? { root, pjson, plugins: new Map([[pjson.name, await quickPlugin(root, pjson, id, bundled[id])]]) } : { root, pjson };
  await execute({ args: argv, loadOptions });
}

/** The command the words name, as oclif would read them; undefined when only the full start can answer. */
export function quickCommandId(argv: string[], root: string, pjson: PackageJson): string | undefined {
  // PLATFORM_NO_QUICK_START=1 takes oclif's full start for everything (a way out, and the tests' yardstick).
  if (process.env.PLATFORM_NO_QUICK_START || argv.length === 0 || argv[0]!.startsWith('-')) return undefined;
  const helpFlags = new Set(['--help', ...(pjson.oclif.additionalHelpFlags ?? [])]);
  for (const a of argv) {
    if (a === '--') break;
    if (helpFlags.has(a)) return undefined;
  }
  let index: QuickIndex;
  try {
    index = JSON.parse(readFileSync(join(root, 'dist/cli-bundle/quick/index.json'), 'utf8')) as QuickIndex;
  } catch {
    return undefined;
  }
  if (index.version !== pjson.version) return undefined;
  const id = argv[0]!.includes(':') ? argv[0]! : spacedCommandId(argv, index);
  const command = index.aliases[id] ?? id;
  return command !== 'help' && command in index.commands ? command : undefined;
}

/**
 * oclif's reading of `platform a b c` with a space as topic separator: words join the id while the
 * joined id is a command or a topic, until a flag, a `k=v` word, or a word after a command that takes
 * positional arguments.
 */
function spacedCommandId(argv: string[], index: QuickIndex): string {
  if (argv.length === 1) return argv[0]!;
  const usable = new Set<string>();
  for (const id of [...Object.keys(index.commands), ...Object.keys(index.aliases)]) {
    const parts = id.split(':');
    for (let i = 1; i <= parts.length; i++) usable.add(parts.slice(0, i).join(':'));
  }
  const takesArgs = (id: string) => index.commands[index.aliases[id] ?? id] === 1;
  const words: string[] = [];
  for (const arg of argv) {
    const joined = [...words, arg].join(':');
    if (usable.has(joined)) words.push(arg);
    else if (arg.includes('=') || arg.startsWith('-') || (words.length > 0 && takesArgs(words.join(':')))) break;
    else words.push(arg);
  }
  return words.join(':');
}

/**
 * A root plugin whose manifest holds one command (with its aliases). A command bundled with this
 * start is taken from the bundle rather than imported from its file by oclif.
 */
async function quickPlugin(root: string, pjson: PackageJson, id: string, bundled?: () => Promise<{ default: unknown }>): Promise<Plugin> {
  const manifest = JSON.parse(readFileSync(join(root, 'dist/cli-bundle/quick', `${id.split(':').join('/')}.json`), 'utf8')) as Interfaces.Manifest;
  const plugin = new Plugin({ isRoot: true, pjson, root });
  // oclif reads the manifest and loads a command through these (private) methods.
  const findCommand = plugin.findCommand.bind(plugin);
  Object.assign(plugin, {
    _manifest: async () => {
      Object.assign(plugin, { hasManifest: true, commandIDs: Object.keys(manifest.commands) });
      return manifest;
    },
    findCommand: async (commandId: string, opts?: { must: boolean }) => {
      if (commandId !== id || !bundled) return findCommand(commandId, opts);
      const command = (await bundled()).default as Command.Class;
      return Object.assign(command, { id, plugin, isESM: false, relativePath: manifest.commands[id]?.relativePath });
    },
  });
  await plugin.load();
  return plugin;
}
