import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import type { z } from 'zod';
import { MCP_PUBLISH_BODY_LIMIT, MCP_PUBLISH_SET_BODY_LIMIT, MCP_PUBLISH_SET_MAX_TOOLS, MCP_TOOL_NAME_RE, mcpRoutes, type McpPublishBody, type McpServer, type McpVersion } from '../api/mcp.js';
import type { ApiClient } from './api-client.js';
import { AbortError, ApiCallError, UsageError } from './errors.js';

/**
 * The CLI side of MCP servers (spec 2 §4.2): reading tool modules, publishing a folder, waiting for
 * a version to serve, calling a tool. Nothing here knows oclif; commands render what it returns.
 */

export interface ServerRef {
  projectID: string;
  server: string;
}

/** What a failed call should make the user do next, instead of the bare API message. */
export function explain(err: unknown, ref: { server?: string; tool?: string; version?: string }): never {
  if (!(err instanceof ApiCallError)) throw err;
  const s = ref.server ?? 'SERVER';
  let next = err.next;
  const m = err.message.toLowerCase();
  if (err.status === 404) {
    if (ref.version !== undefined && /version/.test(m)) next = `see the versions with \`platform mcp versions ${s}\``;
    else if (ref.tool !== undefined && /tool/.test(m)) next = `see the tools with \`platform mcp tools list ${s}\``;
    else if (/project/.test(m)) next = 'check --project (`platform projects list`)';
    else next = 'list the servers with `platform mcp list` (or check --project)';
  } else if (err.status === 403) {
    next = 'this needs a project admin: ask one, or check your role with `platform members list`';
  } else if (err.status === 409) {
    if (ref.version === undefined && /running/.test(m)) next = `publish a tool and wait for it: \`platform mcp tools publish ${s} FILE.py --wait\` (state: \`platform mcp get ${s}\`)`;
    // The running version before the yanked one: "cannot yank the running version" also says yank.
    else if (/running|current/.test(m)) next = `roll back to another version first (\`platform mcp rollback ${s} VERSION\`), then yank this one`;
    else if (/yanked/.test(m)) next = `make it a rollback target again with \`platform mcp unyank ${s} ${ref.version ?? 'VERSION'}\``;
    else if (/image/.test(m)) next = `that version never built; pick one whose state is ready in \`platform mcp versions ${s}\``;
    else if (/exist/.test(m)) next = `choose another name, or look at it with \`platform mcp get ${s}\``;
  } else if (err.status === 413) {
    next = 'a tool module (with its schema) must fit in 1 MiB; split it into several tools';
  } else if (err.status === 400 && ref.version !== undefined && /version/.test(m)) {
    next = `VERSION is a number from \`platform mcp versions ${s}\``;
  }
  throw new ApiCallError(err.status, err.message, err.requestId, err.body, next);
}

/** The tool name a file publishes under by default: its stem, which must be a valid tool name. */
export function toolNameOf(file: string, explicit?: string): string {
  const name = explicit ?? basename(file, extname(file));
  if (!MCP_TOOL_NAME_RE.test(name)) {
    throw new UsageError(
      `"${name}" is not a valid tool name: lowercase letters, digits and underscores, starting with a letter, at most 63`,
      explicit ? 'choose another --name' : 'pass --name, or rename the file (e.g. my_tool.py)',
    );
  }
  return name;
}

export interface ToolSettings {
  description?: string;
  schema?: Record<string, unknown>;
  credential_keys?: string[];
}

/** A publish body from a module's source, with the size check the daemon would answer 413 to. */
export function publishBody(file: string, settings: ToolSettings = {}): McpPublishBody {
  const handler = readSource(file);
  const body: McpPublishBody = { handler };
  if (settings.description !== undefined) body.description = settings.description;
  if (settings.schema !== undefined) body.schema = settings.schema;
  if (settings.credential_keys?.length) body.credential_keys = settings.credential_keys;
  if (Buffer.byteLength(JSON.stringify(body)) > MCP_PUBLISH_BODY_LIMIT) {
    throw new UsageError(`${file} is too large: a tool module (with its schema) must fit in 1 MiB`, 'split it into several tools');
  }
  return body;
}

function readSource(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  if (!text.trim()) throw new UsageError(`${file} is empty`, 'a tool is a Python module with a function decorated with @tool (see `platform init DIR --template mcp-python`)');
  return text;
}

/** An input JSON Schema from a file: an object, as the contract requires. */
export function readSchemaFile(file: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`cannot read the schema ${file}: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`the schema ${file} must be a JSON object (an input JSON Schema such as {"type":"object","properties":{...}})`);
  return doc as Record<string, unknown>;
}

export interface PublishResult {
  server: string;
  name: string;
  version?: number;
  build_id: string;
  note: string;
}

export async function publishTool(client: ApiClient, ref: ServerRef, tool: string, body: McpPublishBody): Promise<PublishResult> {
  try {
    const res = await client.call(mcpRoutes.publish, { params: { projectID: ref.projectID, name: ref.server, tool }, body });
    return { server: res.server, name: res.name, version: res.version, build_id: res.build_id, note: res.note };
  } catch (e) {
    explain(e, { server: ref.server, tool });
  }
}

/**
 * Optional per-tool settings of a folder publish: `mcp.json` beside the modules,
 * `{"tools": {"<name>": {"description", "schema", "credential_keys"}}}` (credentialKeys also read).
 */
export const FOLDER_SETTINGS = 'mcp.json';

function folderSettings(dir: string): Record<string, ToolSettings> {
  const file = join(dir, FOLDER_SETTINGS);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const tools = (doc as { tools?: unknown } | null)?.tools ?? {};
  if (typeof tools !== 'object' || Array.isArray(tools)) throw new UsageError(`${file}: "tools" must be an object keyed by tool name`);
  const out: Record<string, ToolSettings> = {};
  for (const [name, raw] of Object.entries(tools as Record<string, Record<string, unknown>>)) {
    const keys = raw.credential_keys ?? raw.credentialKeys;
    if (keys !== undefined && (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string'))) throw new UsageError(`${file}: tools.${name}.credential_keys must be a list of secret names`);
    if (raw.description !== undefined && typeof raw.description !== 'string') throw new UsageError(`${file}: tools.${name}.description must be a string`);
    if (raw.schema !== undefined && (typeof raw.schema !== 'object' || raw.schema === null || Array.isArray(raw.schema))) throw new UsageError(`${file}: tools.${name}.schema must be a JSON object`);
    out[name] = { description: raw.description as string | undefined, schema: raw.schema as Record<string, unknown> | undefined, credential_keys: keys as string[] | undefined };
  }
  return out;
}

export interface FolderTool {
  name: string;
  file: string;
  body: McpPublishBody;
}

/**
 * The tool modules of a folder: every `*.py` directly in it, by name. Files starting with `_`
 * (`__init__.py`, private helpers) are skipped; any other file whose stem is not a tool name stops
 * the publish before anything is sent, so a folder is never published half.
 */
export function readFolder(dir: string): { tools: FolderTool[]; skipped: string[] } {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch (e) {
    throw new UsageError(`cannot read the folder ${dir}: ${(e as Error).message}`);
  }
  const settings = folderSettings(dir);
  const skipped: string[] = [];
  const bad: string[] = [];
  const tools: FolderTool[] = [];
  for (const entry of entries) {
    if (extname(entry) !== '.py' || !statSync(join(dir, entry)).isFile()) continue;
    const stem = basename(entry, '.py');
    if (stem.startsWith('_')) {
      skipped.push(entry);
      continue;
    }
    if (!MCP_TOOL_NAME_RE.test(stem)) {
      bad.push(entry);
      continue;
    }
    tools.push({ name: stem, file: join(dir, entry), body: publishBody(join(dir, entry), settings[stem]) });
  }
  if (bad.length) {
    throw new UsageError(
      `not a tool name: ${bad.join(', ')} (a tool module is named <tool>.py with lowercase letters, digits and underscores, starting with a letter)`,
      'rename those files, or prefix helper files with _ so they are skipped',
    );
  }
  const unknown = Object.keys(settings).filter((n) => !tools.some((t) => t.name === n));
  if (unknown.length) throw new UsageError(`${join(dir, FOLDER_SETTINGS)} names tools with no module in the folder: ${unknown.join(', ')}`);
  if (!tools.length) throw new UsageError(`no tool modules (*.py) in ${dir}`, 'create one with `platform init DIR --template mcp-python`');
  return { tools, skipped };
}

export type PublishSetResult = z.output<(typeof mcpRoutes)['publishSet']['response']>;

/**
 * Publishes a folder's modules in one request, so the folder is ONE version (merged into the
 * server's set, or replacing it with prune). The daemon decides what changed: an unchanged folder
 * answers published false and makes no version.
 */
export async function publishFolder(client: ApiClient, ref: ServerRef, tools: FolderTool[], prune: boolean): Promise<PublishSetResult> {
  if (tools.length > MCP_PUBLISH_SET_MAX_TOOLS) {
    throw new UsageError(`the folder has ${tools.length} tool modules; one publish takes at most ${MCP_PUBLISH_SET_MAX_TOOLS}`, 'split the tools over several servers');
  }
  const body = { tools: Object.fromEntries(tools.map((t) => [t.name, t.body])), ...(prune ? { prune: true } : {}) };
  const size = Buffer.byteLength(JSON.stringify(body));
  if (size > MCP_PUBLISH_SET_BODY_LIMIT) {
    throw new UsageError(`the folder's modules add up to ${size} bytes; one publish takes at most 8 MiB`, 'split the tools over several servers, or move shared code out of the tool modules');
  }
  try {
    return await client.call(mcpRoutes.publishSet, { params: { projectID: ref.projectID, name: ref.server }, body });
  } catch (e) {
    explain(e, { server: ref.server });
  }
}

export async function deleteTool(client: ApiClient, ref: ServerRef, tool: string) {
  try {
    return await client.call(mcpRoutes.deleteTool, { params: { projectID: ref.projectID, name: ref.server, tool } });
  } catch (e) {
    explain(e, { server: ref.server, tool });
  }
}

export interface WaitUpdate {
  version: number;
  state: string;
  message?: string;
}

export interface WaitOptions {
  /** The version to wait for; without it, the newest one. */
  version?: number;
  onState?: (u: WaitUpdate) => void;
  pollMs?: number;
  timeoutMs?: number;
}

/**
 * Polls until `version` serves (ready and current) or fails. A failure becomes an AbortError with
 * the build's message; the server keeps serving its previous version, which the error says.
 */
export async function waitForVersion(client: ApiClient, ref: ServerRef, o: WaitOptions = {}): Promise<{ server: McpServer; version: McpVersion }> {
  const deadline = Date.now() + (o.timeoutMs ?? 10 * 60_000);
  const params = { projectID: ref.projectID, name: ref.server };
  let last = '';
  for (;;) {
    let server: McpServer;
    let versions: McpVersion[];
    try {
      [server, versions] = await Promise.all([
        client.call(mcpRoutes.get, { params }).then((r) => r.mcp_server),
        client.call(mcpRoutes.versions, { params }).then((r) => r.versions),
      ]);
    } catch (e) {
      explain(e, { server: ref.server });
    }
    const v = o.version === undefined ? versions[0] : versions.find((x) => x.version === o.version);
    if (!v) throw new AbortError(`${ref.server} has no version ${o.version ?? ''}`.trim(), `publish a tool with \`platform mcp tools publish ${ref.server} FILE.py\``);
    // A version's own state when the daemon reports it; else the server's, once it runs this version.
    const serving = server.version === v.version;
    const state = v.state ?? (serving || server.state === 'failed' ? server.state : 'pending');
    // The daemon's message may open with "version N failed to build: "; the error says that already.
    const message = (v.message ?? (state === 'failed' ? server.message : undefined))?.replace(/^version \d+ failed( to build)?: /, '');
    const seen = `${state}\n${message ?? ''}`;
    if (seen !== last) o.onState?.({ version: v.version, state, message });
    last = seen;
    if (state === 'failed') {
      const keeps = server.version !== undefined && server.version !== v.version ? `; version ${server.version} keeps serving` : '';
      throw new AbortError(
        `${ref.server} version ${v.version} failed${keeps}:\n${message ?? '(no message)'}`,
        `fix the tool and publish again; the versions: \`platform mcp versions ${ref.server}\``,
      );
    }
    // Ready and running it; or ready and already replaced by a newer publish (nothing to wait for).
    if (state === 'ready' && server.state === 'ready' && (serving || (server.version ?? 0) > v.version)) return { server, version: v };
    if (Date.now() > deadline) {
      throw new AbortError(`${ref.server} version ${v.version} is still ${state} after ${Math.round((o.timeoutMs ?? 600_000) / 1000)} s`, `check it with \`platform mcp get ${ref.server}\``);
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 150));
  }
}

/** --arg KEY=VALUE pairs split at the first `=`; a pair without a key is a usage error (before any request). */
export function splitArgPairs(pairs: string[] = []): [string, string][] {
  return pairs.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg ${pair} is not KEY=VALUE`, 'e.g. --arg a=1 --arg name=Ada');
    return [pair.slice(0, eq), pair.slice(eq + 1)];
  });
}

/** --args: one JSON object. */
export function parseArgsJson(json?: string): Record<string, unknown> {
  if (json === undefined) return {};
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw new UsageError(`--args is not valid JSON: ${(e as Error).message}`, `pass an object, e.g. --args '{"a": 1}'`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError('--args must be a JSON object', `e.g. --args '{"a": 1, "b": "text"}'`);
  return doc as Record<string, unknown>;
}

/** The input schema's properties (one JSON Schema per parameter), when the schema has any. */
export type ArgSchemas = Record<string, Record<string, unknown>>;

export function argSchemas(schema: Record<string, unknown> | undefined): ArgSchemas | undefined {
  const props = schema?.properties;
  return props && typeof props === 'object' && !Array.isArray(props) ? (props as ArgSchemas) : undefined;
}

/**
 * Arguments of a call: --args JSON (an object) first, then each --arg k=v over it, each value read
 * as its parameter's schema says (coerceArg); without a schema for the parameter, JSON when it
 * parses (numbers, booleans, lists, objects, quoted strings), else the text.
 */
export function parseCallArgs(pairs: string[] = [], json?: string, schemas?: ArgSchemas): Record<string, unknown> {
  const args = parseArgsJson(json);
  for (const [key, text] of splitArgPairs(pairs)) args[key] = coerceArg(key, text, schemas?.[key]);
  return args;
}

export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type JsonType = 'string' | 'null' | 'boolean' | 'integer' | 'number' | 'array' | 'object';
const JSON_TYPES: JsonType[] = ['string', 'null', 'boolean', 'integer', 'number', 'array', 'object'];
const NUMBER_RE = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** The JSON types a parameter accepts: `type` (one or a list), and those of anyOf/oneOf members (Optional, Union). */
function typesOf(schema: Record<string, unknown>, out = new Set<JsonType>()): Set<JsonType> {
  const t = schema.type;
  for (const x of Array.isArray(t) ? t : t === undefined ? [] : [t]) if (JSON_TYPES.includes(x as JsonType)) out.add(x as JsonType);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (Array.isArray(members)) for (const m of members) if (m && typeof m === 'object') typesOf(m as Record<string, unknown>, out);
  }
  return out;
}

/** Reads the text as one JSON type; undefined when it is not one. */
function asType(type: JsonType, text: string): { value: unknown } | undefined {
  switch (type) {
    case 'string':
      return { value: text };
    case 'null':
      return text === 'null' ? { value: null } : undefined;
    case 'boolean':
      return /^(true|false)$/i.test(text) ? { value: text.toLowerCase() === 'true' } : undefined;
    case 'integer':
      return NUMBER_RE.test(text) && Number.isSafeInteger(Number(text)) ? { value: Number(text) } : undefined;
    case 'number':
      return NUMBER_RE.test(text) && Number.isFinite(Number(text)) ? { value: Number(text) } : undefined;
    case 'array':
    case 'object': {
      const v = parseValue(text);
      const ok = type === 'array' ? Array.isArray(v) : v !== null && typeof v === 'object' && !Array.isArray(v);
      return ok && v !== text ? { value: v } : undefined;
    }
  }
}

const EXPECTED: Record<JsonType, [string, string]> = {
  string: ['a string', 'text'],
  null: ['null', 'null'],
  boolean: ['true or false', 'true'],
  integer: ['an integer', '3'],
  number: ['a number', '2.5'],
  array: ['a JSON array', '\'[1,2]\''],
  object: ['a JSON object', '\'{"k":1}\''],
};

/**
 * One --arg value for a parameter whose JSON Schema is known (from the tools list): a string
 * parameter takes the text as it is (`--arg zip=01234` stays "01234"); integer, number and boolean
 * parameters parse it, arrays and objects parse JSON; a parameter of several types (Optional[int]:
 * integer or null) takes the first that fits, in the order null, boolean, integer, number, array,
 * object, and the text when one of them is string. A value that fits none is a usage error naming
 * the parameter and the type, before any call. Without a schema, or one that names no type
 * (Any, $ref), the value is JSON when it parses, else the text; an enum without a type matches
 * its members.
 */
export function coerceArg(key: string, text: string, schema: Record<string, unknown> | undefined): unknown {
  if (!schema) return parseValue(text);
  const types = typesOf(schema);
  if (!types.size) {
    const members = schema.enum;
    if (Array.isArray(members) && !members.includes(text)) {
      const v = parseValue(text);
      return members.some((m) => JSON.stringify(m) === JSON.stringify(v)) ? v : text;
    }
    return Array.isArray(members) ? text : parseValue(text);
  }
  if (types.has('string')) return text;
  for (const type of JSON_TYPES) {
    if (!types.has(type)) continue;
    const hit = asType(type, text);
    if (hit) return hit.value;
  }
  const wanted = JSON_TYPES.filter((t) => types.has(t));
  throw new UsageError(
    `--arg ${key}: expected ${wanted.map((t) => EXPECTED[t][0]).join(' or ')}, got ${JSON.stringify(text)}`,
    `e.g. --arg ${key}=${EXPECTED[wanted[0]!][1]} (see the schema with \`platform mcp tools list SERVER --json\`)`,
  );
}

/** Slack over the protocol endpoint's longest request timeout, so the daemon's answer arrives first. */
const CALL_WAIT_SECONDS = 900 + 30;

export interface CallResult {
  server: string;
  tool: string;
  version: number;
  content: Record<string, unknown>[];
  structuredContent?: unknown;
  isError: boolean;
  duration_ms: number;
}

export async function callTool(client: ApiClient, ref: ServerRef, tool: string, args: Record<string, unknown>): Promise<CallResult> {
  try {
    const path = await client.pathFor(mcpRoutes.call, { projectID: ref.projectID, name: ref.server, tool });
    const res = await client.request(mcpRoutes.call.method, path, { body: { arguments: args }, waitSeconds: CALL_WAIT_SECONDS });
    return (await res.json()) as CallResult;
  } catch (e) {
    explain(e, { server: ref.server, tool });
  }
}

/** The readable part of a tool result: text items as they are, anything else as a one-line summary. */
export function contentText(r: Pick<CallResult, 'content' | 'structuredContent'>): string {
  const parts = r.content.map((c) => {
    if (c.type === 'text' && typeof c.text === 'string') return c.text;
    if (c.type === 'image' || c.type === 'audio') return `[${c.type} ${String(c.mimeType ?? '')}, ${Math.floor((String(c.data ?? '').length * 3) / 4)} bytes]`;
    if (c.type === 'resource_link' || c.type === 'resource') return `[resource ${String(c.uri ?? (c.resource as { uri?: string } | undefined)?.uri ?? '')}]`;
    return JSON.stringify(c);
  });
  if (!parts.length && r.structuredContent !== undefined) return JSON.stringify(r.structuredContent, null, 2);
  return parts.join('\n');
}
