/**
 * Which arguments and flags name an existing resource, so completion can offer the names the
 * daemon knows. Everything else is either a path (the shell completes file names) or free text
 * (nothing is offered: guessing an e-mail or a message would only get in the way).
 */
export type ResourceKind = 'agent' | 'topic' | 'subscription' | 'index' | 'mcp-server' | 'service' | 'cache' | 'trigger' | 'project' | 'context';

/** What an argument position expects. */
export type ArgValue = { resource: ResourceKind } | { files: true } | { free: true };

/** `name` means a different thing in every topic: the topic (first word of the command) decides. */
const NAME_BY_TOPIC: Record<string, ResourceKind> = {
  agents: 'agent',
  // The short aliases of `agents env …` and `agents files …`.
  env: 'agent',
  files: 'agent',
  invoke: 'agent',
  logs: 'agent',
  embed: 'agent',
  knowledge: 'agent',
  topics: 'topic',
  indexes: 'index',
  services: 'service',
  cache: 'cache',
  triggers: 'trigger',
  context: 'context',
};

/** Argument names that mean the same resource in every command that has them. */
const BY_ARG_NAME: Record<string, ResourceKind> = {
  agent: 'agent',
  server: 'mcp-server',
  topic: 'topic',
  subscription: 'subscription',
  project: 'project',
};

const PATH_ARGS = new Set(['dir', 'file']);

/** What argument `argName` of command `id` (oclif id, `topics:get`) expects. */
export function argValue(id: string, argName: string): ArgValue {
  const [topic, ...rest] = id.split(':');
  // A new name is the user's to invent.
  if (rest.at(-1) === 'create' && argName === 'name') return { free: true };
  // subscriptions get|update|delete TOPIC NAME: the NAME is one of that topic's subscriptions.
  if (topic === 'subscriptions' && argName === 'name') return { resource: 'subscription' };
  const kind = BY_ARG_NAME[argName] ?? (argName === 'name' ? NAME_BY_TOPIC[topic!] : undefined);
  if (kind) return { resource: kind };
  if (PATH_ARGS.has(argName)) return { files: true };
  return { free: true };
}

/** Flags whose value names a resource (option lists and paths are handled from the flag itself). */
export const FLAG_RESOURCES: Record<string, ResourceKind> = {
  project: 'project',
  context: 'context',
  topic: 'topic',
};

/** Flags whose value is a local path. */
export const PATH_FLAGS = new Set(['file', 'vector-file', 'from-file', 'ca-cert', 'config', 'output', 'schema', 'home']);
