import { argValue, FLAG_RESOURCES, PATH_FLAGS, type ResourceKind } from './resources.js';

/** The command tree as completion needs it (built from oclif's manifest by the command). */
export interface CommandSpec {
  /** oclif id: words joined by `:` (`agents:get`). */
  id: string;
  summary?: string;
  /** Positional argument names, in order. */
  args: string[];
  /** The fixed choices of an argument (`completion SHELL`), by name. */
  argOptions?: Record<string, readonly string[]>;
  flags: FlagSpec[];
}

export interface FlagSpec {
  name: string;
  char?: string;
  takesValue: boolean;
  /** Can be given more than once (offered again after it was used). */
  multiple?: boolean;
  options?: readonly string[];
  description?: string;
}

export interface TopicSpec {
  id: string;
  description?: string;
}

export interface Candidate {
  value: string;
  description?: string;
}

/** What the shell does besides offering the candidates (the last line of `__complete`: `:N`). */
export const Directive = {
  /** Nothing offered: the shell may complete file names instead. */
  files: 1,
  /** Do not add a space after the candidate (a prefix like `orders/` to go on from). */
  noSpace: 2,
} as const;

export interface Completion {
  candidates: Candidate[];
  directive: number;
}

/** Where resource names are looked up: the context and project the typed command would use. */
export interface Scope {
  context?: string;
  project?: string;
  /** The topic whose subscriptions are meant. */
  topic?: string;
}

export type NameLookup = (kind: ResourceKind, scope: Scope) => Promise<string[]>;

const none = (directive = 0): Completion => ({ candidates: [], directive });

/**
 * The candidates for the last of `words` (the word under the cursor, possibly empty), given the
 * words before it: subcommands, then flags, flag values and argument values (resource names
 * looked up through `lookup`). `words` excludes the program name.
 */
export async function complete(words: string[], tree: { commands: CommandSpec[]; topics: TopicSpec[] }, lookup: NameLookup): Promise<Completion> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const ids = tree.commands.map((c) => c.id);
  const isPrefix = (path: string) => ids.some((id) => id.startsWith(`${path}:`));

  // The command: as many leading words as still name a command or a topic.
  const path: string[] = [];
  let used = 0;
  while (used < before.length && !before[used]!.startsWith('-')) {
    const next = [...path, before[used]].join(':');
    if (!ids.includes(next) && !isPrefix(next)) break;
    path.push(before[used]!);
    used++;
  }
  const id = path.join(':');
  const command = tree.commands.find((c) => c.id === id);
  const children = used === before.length && !current.startsWith('-') ? childrenOf(id, tree) : [];
  if (!command) return { candidates: byPrefix(children, current), directive: 0 };

  const rest = before.slice(used);
  // bash splits `--project=sh` at the `=` (COMP_WORDBREAKS): `--project`, `=`, `sh`. Under the
  // cursor a lone `=` is replaced whole, so its candidates keep it in front.
  if (current === '=' && rest.length && findFlag(command, rest.at(-1)!)?.takesValue) {
    return prefixed('=', await flagValue(findFlag(command, rest.at(-1)!)!, '', scopeOf(parseRest(rest.slice(0, -1), command).flagValues), lookup));
  }
  const parsed = parseRest(rest, command);
  if (parsed.pendingFlag) return flagValue(parsed.pendingFlag, current, scopeOf(parsed.flagValues), lookup);
  // zsh and fish hand `--project=sh` over whole: its candidates are whole words too.
  const eq = current.indexOf('=');
  if (current.startsWith('--') && eq > 2) {
    const flag = findFlag(command, current.slice(0, eq));
    if (!flag?.takesValue) return none();
    const head = current.slice(0, eq + 1);
    const inner = await flagValue(flag, current.slice(eq + 1), scopeOf(parsed.flagValues), lookup);
    // A path after `--file=` is not a word the shell's file completion starts from.
    return { ...prefixed(head, inner), directive: inner.directive & ~Directive.files };
  }
  if (current.startsWith('-')) {
    const offered = command.flags
      .filter((f) => f.multiple || !parsed.flagValues.has(f.name))
      .map((f) => ({ value: `--${f.name}`, description: f.description }));
    return { candidates: byPrefix([...offered, { value: '--help', description: 'show help' }], current), directive: 0 };
  }
  const argName = command.args[parsed.positionals.length];
  if (!argName) return { candidates: byPrefix(children, current), directive: 0 };
  const options = command.argOptions?.[argName];
  if (options) return { candidates: byPrefix(options.map((o) => ({ value: o })), current), directive: 0 };
  const value = argValue(command.id, argName);
  if ('files' in value) return { candidates: byPrefix(children, current), directive: children.length ? 0 : Directive.files };
  if ('free' in value) return { candidates: byPrefix(children, current), directive: 0 };
  const scope = scopeOf(parsed.flagValues);
  if (value.resource === 'subscription') return subscription(command, parsed, current, scope, lookup);
  const names = await lookup(value.resource, scope);
  return { candidates: [...byPrefix(children, current), ...byPrefix(names.map((n) => ({ value: n })), current)], directive: 0 };
}

/** The next word under a topic path: its commands and subtopics. */
function childrenOf(id: string, tree: { commands: CommandSpec[]; topics: TopicSpec[] }): Candidate[] {
  const depth = id ? id.split(':').length : 0;
  const out = new Map<string, Candidate>();
  const under = (x: string) => (id ? x.startsWith(`${id}:`) : true);
  for (const t of tree.topics) if (under(t.id) && t.id.split(':').length === depth + 1) out.set(t.id.split(':')[depth]!, { value: t.id.split(':')[depth]!, description: t.description });
  for (const c of tree.commands) {
    if (!under(c.id)) continue;
    const word = c.id.split(':')[depth]!;
    if (!out.has(word) || c.id.split(':').length === depth + 1) out.set(word, { value: word, description: c.id.split(':').length === depth + 1 ? c.summary : out.get(word)?.description });
  }
  return [...out.values()].sort((a, b) => a.value.localeCompare(b.value));
}

interface Parsed {
  positionals: string[];
  flagValues: Map<string, string>;
  /** A flag that takes a value and is waiting for it (the word under the cursor is that value). */
  pendingFlag?: FlagSpec;
}

const findFlag = (command: CommandSpec, word: string) =>
  word.startsWith('--') ? command.flags.find((f) => f.name === word.slice(2)) : command.flags.find((f) => f.char !== undefined && `-${f.char}` === word);

const prefixed = (head: string, c: Completion): Completion => ({ ...c, candidates: c.candidates.map((x) => ({ ...x, value: head + x.value })) });

function parseRest(rest: string[], command: CommandSpec): Parsed {
  const out: Parsed = { positionals: [], flagValues: new Map() };
  const find = (word: string) => findFlag(command, word);
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (word === '--') {
      out.positionals.push(...rest.slice(i + 1));
      break;
    }
    if (!word.startsWith('-') || word === '-') {
      out.positionals.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const flag = find(eq > 0 ? word.slice(0, eq) : word);
    if (!flag) continue;
    if (!flag.takesValue) out.flagValues.set(flag.name, 'true');
    else if (eq > 0) out.flagValues.set(flag.name, word.slice(eq + 1));
    else if (rest[i + 1] === '=') {
      // bash's split of `--flag=value` (see complete): the value is the word after the `=`.
      i += 2;
      if (i < rest.length) out.flagValues.set(flag.name, rest[i]!);
      else out.pendingFlag = flag;
    } else if (i + 1 < rest.length) out.flagValues.set(flag.name, rest[++i]!);
    else out.pendingFlag = flag;
  }
  return out;
}

/** --project and --context as typed (else their environment variables) pick where names come from. */
function scopeOf(flags: Map<string, string>): Scope {
  return { context: flags.get('context') ?? process.env.PLATFORM_CONTEXT, project: flags.get('project') ?? process.env.PLATFORM_PROJECT };
}

async function flagValue(flag: FlagSpec, current: string, scope: Scope, lookup: NameLookup): Promise<Completion> {
  if (flag.options) return { candidates: byPrefix(flag.options.map((o) => ({ value: o })), current), directive: 0 };
  const kind = FLAG_RESOURCES[flag.name];
  if (kind) return { candidates: byPrefix((await lookup(kind, scope)).map((n) => ({ value: n })), current), directive: 0 };
  return none(PATH_FLAGS.has(flag.name) ? Directive.files : 0);
}

/**
 * A subscription lives under a topic: `subscriptions get TOPIC NAME` names the topic first,
 * `pull`/`ack` take `TOPIC/SUB` (or SUB with --topic). Without a topic yet, topics are offered as
 * `TOPIC/` prefixes to go on from.
 */
async function subscription(command: CommandSpec, parsed: Parsed, current: string, scope: Scope, lookup: NameLookup): Promise<Completion> {
  const topicArg = command.args.indexOf('topic');
  const topic = topicArg >= 0 ? parsed.positionals[topicArg] : parsed.flagValues.get('topic');
  if (topic) return { candidates: byPrefix((await lookup('subscription', { ...scope, topic })).map((n) => ({ value: n })), current), directive: 0 };
  const slash = current.indexOf('/');
  if (slash < 0) return { candidates: byPrefix((await lookup('topic', scope)).map((t) => ({ value: `${t}/` })), current), directive: Directive.noSpace };
  const typedTopic = current.slice(0, slash);
  const subs = await lookup('subscription', { ...scope, topic: typedTopic });
  return { candidates: byPrefix(subs.map((s) => ({ value: `${typedTopic}/${s}` })), current), directive: 0 };
}

const byPrefix = (list: Candidate[], prefix: string) => list.filter((c) => c.value.startsWith(prefix));

/** The wire format the shell scripts read: `value<TAB>description` lines, then `:directive`. */
export function formatCompletion(c: Completion): string {
  const lines = c.candidates.map((x) => (x.description ? `${x.value}\t${x.description.split('\n')[0]}` : x.value));
  return [...lines, `:${c.directive}`].join('\n') + '\n';
}
