import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { complete, formatCompletion, type CommandSpec, type TopicSpec } from './candidates.js';
import { daemonNames } from './names.js';

interface ManifestFlag {
  name: string;
  char?: string;
  type: 'boolean' | 'option';
  multiple?: boolean;
  options?: string[];
  summary?: string;
  description?: string;
  hidden?: boolean;
}

interface ManifestCommand {
  id: string;
  aliases?: string[];
  hidden?: boolean;
  summary?: string;
  description?: string;
  args?: Record<string, { options?: string[] }>;
  flags?: Record<string, ManifestFlag>;
}

interface TopicTree {
  description?: string;
  subtopics?: Record<string, TopicTree>;
}

/**
 * The visible commands (aliases too: `env get` is typed as often as `agents env get`) and the
 * described topics, straight from oclif's manifest and package.json: loading oclif and the
 * command modules would cost more than the rest of a TAB.
 */
export function commandTree(root: string): { commands: CommandSpec[]; topics: TopicSpec[] } {
  const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, ManifestCommand> };
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { oclif?: { topics?: Record<string, TopicTree> } };
  const commands: CommandSpec[] = [];
  for (const c of Object.values(manifest.commands)) {
    if (c.hidden) continue;
    const spec = {
      summary: c.summary ?? c.description?.split('\n')[0],
      args: Object.keys(c.args ?? {}),
      argOptions: Object.fromEntries(Object.entries(c.args ?? {}).flatMap(([name, a]) => (a.options ? [[name, a.options]] : []))),
      flags: Object.values(c.flags ?? {})
        .filter((f) => !f.hidden)
        .map((f) => ({ name: f.name, char: f.char, takesValue: f.type === 'option', multiple: f.multiple, options: f.options, description: f.summary ?? f.description })),
    };
    for (const id of [c.id, ...(c.aliases ?? [])]) commands.push({ id, ...spec });
  }
  const topics: TopicSpec[] = [];
  const walk = (tree: Record<string, TopicTree>, prefix: string) => {
    for (const [name, t] of Object.entries(tree)) {
      topics.push({ id: prefix + name, description: t.description });
      if (t.subtopics) walk(t.subtopics, `${prefix}${name}:`);
    }
  };
  walk(pkg.oclif?.topics ?? {}, '');
  return { commands, topics };
}

/**
 * `platform __complete -- WORDS…` (bin/run.js sends it here without loading oclif), what the
 * scripts of `platform completion` call on every TAB, like cobra's `__complete`. The words come
 * after `--` so that a `-h` being typed is never taken for a request for help.
 */
export async function runComplete(argv: string[], root: string): Promise<void> {
  const words = argv[0] === '--' ? argv.slice(1) : argv;
  const result = await complete(words.length ? words : [''], commandTree(root), daemonNames());
  process.stdout.write(formatCompletion(result));
  // A look-up abandoned at the deadline (a daemon stopped with SIGSTOP) still holds a socket;
  // this ends the process then, and never delays a normal exit (the timer is unref'd).
  setTimeout(() => process.exit(0), 50).unref();
}
