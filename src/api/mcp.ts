import { z } from 'zod';
import { KiB, MiB, route } from './contract.js';
import { Note, PageQuery, Timestamp } from './common.js';
import { ProjectParams } from './projects.js';
import { lazySchema } from './lazy.js';

/** MCP servers: tools as immutable versions behind a Model Context Protocol endpoint (spec 2 §2.2, §3, §4.2, §8, §9). */

export const MCP_SERVER_NAME_RE = /^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$/;
export const MCP_TOOL_NAME_RE = /^[a-z][a-z0-9_]{0,62}$/;
export const MCP_CREATE_BODY_LIMIT = 4 * KiB;
export const MCP_PUBLISH_BODY_LIMIT = 1 * MiB;
/**
 * Publishing a whole tool set in one request: each tool still fits the 1 MiB of a single publish,
 * the body as a whole may hold several (docs/decisions/mcp.md, Daemon area).
 */
export const MCP_PUBLISH_SET_BODY_LIMIT = 8 * MiB;
/** At most this many tools in one set publish (8 MiB / 64 tools leaves 128 KiB a module on average). */
export const MCP_PUBLISH_SET_MAX_TOOLS = 64;
/** Spec 2 §8: the protocol endpoint's request timeout, default 60 s, at most 900 s. */
export const MCP_REQUEST_TIMEOUT_DEFAULT = 60;
export const MCP_REQUEST_TIMEOUT_MAX = 900;
/** Spec 2 §2.2: svc_mcp_ followed by 64 hexadecimal characters; never returned by any API. */
export const MCP_BEARER_RE = /^svc_mcp_[0-9a-f]{64}$/;

export const MCP_STATES = ['pending', 'building', 'deploying', 'ready', 'failed'] as const;
export const McpState = lazySchema(() => z.enum(MCP_STATES));
export type McpState = z.infer<typeof McpState>;

export const McpServerParams = lazySchema(() => ProjectParams.extend({ name: z.string() }));
export const McpToolParams = lazySchema(() => McpServerParams.extend({ tool: z.string() }));
/** Kept a string: "not a positive integer" is the handler's 400, with the spec's wording. */
export const McpVersionParams = lazySchema(() => McpServerParams.extend({ version: z.string() }));

export const McpServer = lazySchema(() => z.object({
  name: z.string(),
  visibility: z.string().describe('present (empty) in the shape'),
  expose: z.string().describe('empty: private, reachable only inside the platform; apps: published on the apps domain'),
  state: McpState,
  ready: z.boolean().describe('true exactly when state is ready'),
  url: z.string().optional().describe('present once serving; the protocol endpoint is url + /mcp'),
  version: z.number().int().optional().describe('version currently running'),
  image: z.string().optional().describe('image of the running version'),
  tool_names: z.array(z.string()),
  tool_count: z.number().int(),
  message: z.string().optional().describe('why a build or rollout failed'),
  created_at: Timestamp,
}));
export type McpServer = z.infer<typeof McpServer>;

/** JSON Schema of a tool's input (an object schema). */
export const ToolSchema = lazySchema(() => z.record(z.string(), z.unknown()));

export const McpTool = lazySchema(() => z.object({
  name: z.string(),
  description: z.string(),
  handler: z.string().describe('Python source of the tool module'),
  schema: ToolSchema.describe('input JSON Schema: the explicit one published, else derived from the signature'),
  credential_keys: z.array(z.string()),
  credentialKeys: z.array(z.string()).describe('same value as credential_keys (compatibility spelling)'),
  updated_at: Timestamp,
}));
export type McpTool = z.infer<typeof McpTool>;

export const McpVersion = lazySchema(() => z.object({
  version: z.number().int(),
  state: McpState.optional().describe('build state of this version'),
  image_digest: z.string().optional().describe('present once built'),
  credential_keys: z.array(z.string()),
  tool_names: z.array(z.string()),
  tool_count: z.number().int(),
  current: z.boolean(),
  yanked: z.boolean().optional().describe('only on retired versions'),
  yanked_at: Timestamp.optional(),
  message: z.string().optional().describe('why this version failed to build'),
  created_at: Timestamp,
}));
export type McpVersion = z.infer<typeof McpVersion>;

/** Spec 2 §4.2: other fields are silently ignored on create (so not strict). */
export const McpCreateBody = lazySchema(() => z.object({
  name: z.string().regex(MCP_SERVER_NAME_RE, 'must be 1 to 40 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen'),
  expose: z.string().optional(),
}));

const CredentialKeys = lazySchema(() => z.array(z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_-]{0,62}$/, 'must be a secret name')).max(64));

export const McpPublishBody = lazySchema(() => z.strictObject({
  handler: z.string().optional().describe('required; checked by the handler so the error reads "handler is required"'),
  description: z.string().max(4096).optional(),
  schema: ToolSchema.optional(),
  credentialKeys: CredentialKeys.optional(),
  credential_keys: CredentialKeys.optional(),
}));
export type McpPublishBody = z.infer<typeof McpPublishBody>;

/**
 * PUT tools (the whole set): every tool as the single publish's body, keyed by tool name; names and
 * handlers are checked by the handler so each 400 names its tool. prune removes the tools the body
 * does not name.
 */
export const McpPublishSetBody = lazySchema(() => z.strictObject({
  tools: z.record(z.string(), McpPublishBody).describe('tool name -> the single publish body (handler, description, schema, credentialKeys or credential_keys)'),
  prune: z.boolean().optional().describe('also remove the tools of the current set the body does not name (default false: they are kept)'),
}));
export type McpPublishSetBody = z.infer<typeof McpPublishSetBody>;

export const mcpRoutes = {
  create: route({
    id: 'mcpservers.create',
    method: 'POST',
    path: '/v1/projects/{projectID}/mcpservers',
    summary: 'Create an MCP server (private unless expose is apps); it has nothing to build until a tool is published',
    auth: 'any',
    params: ProjectParams,
    body: McpCreateBody,
    bodyLimit: MCP_CREATE_BODY_LIMIT,
    status: 201,
    response: lazySchema(() => z.object({ mcp_server: McpServer })),
  }),
  list: route({
    id: 'mcpservers.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/mcpservers',
    summary: "List a project's MCP servers",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ mcpservers: z.array(McpServer), next_page_token: z.string().optional() })),
  }),
  get: route({
    id: 'mcpservers.get',
    method: 'GET',
    path: '/v1/projects/{projectID}/mcpservers/{name}',
    summary: 'One MCP server; poll until ready',
    auth: 'any',
    params: McpServerParams,
    status: 200,
    response: lazySchema(() => z.object({ mcp_server: McpServer })),
  }),
  delete: route({
    id: 'mcpservers.delete',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/mcpservers/{name}',
    summary: 'Delete an MCP server, its versions and its instances',
    auth: 'any',
    params: McpServerParams,
    status: 200,
    response: lazySchema(() => z.object({ name: z.string(), deleted: z.boolean() })),
  }),
  tools: route({
    id: 'mcpservers.tools.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/mcpservers/{name}/tools',
    summary: "The server's current tool set",
    auth: 'any',
    params: McpServerParams,
    status: 200,
    response: lazySchema(() => z.object({ server: z.string(), tools: z.array(McpTool) })),
  }),
  publish: route({
    id: 'mcpservers.tools.publish',
    method: 'PUT',
    path: '/v1/projects/{projectID}/mcpservers/{name}/tools/{tool}',
    summary: 'Publish a tool module: snapshots the whole tool set into a new version and builds it',
    auth: 'any',
    params: McpToolParams,
    body: McpPublishBody,
    bodyLimit: MCP_PUBLISH_BODY_LIMIT,
    status: 202,
    response: lazySchema(() => z.object({ server: z.string(), name: z.string(), published: z.boolean(), build_id: z.string(), version: z.number().int().optional(), note: Note })),
  }),
  /**
   * Not in spec 2 §4.2: `platform mcp publish SERVER DIR` makes ONE version from a folder (issue 18),
   * which per-tool PUTs cannot (each makes a version). 200 with published false and no build_id
   * when the resulting set equals the current one (nothing to build).
   */
  publishSet: route({
    id: 'mcpservers.tools.publishSet',
    method: 'PUT',
    path: '/v1/projects/{projectID}/mcpservers/{name}/tools',
    summary: 'Publish several tool modules at once (merged into the current set, or replacing it with prune): one new version; 200 and no version when nothing changes',
    auth: 'any',
    params: McpServerParams,
    body: McpPublishSetBody,
    bodyLimit: MCP_PUBLISH_SET_BODY_LIMIT,
    status: 202,
    response: lazySchema(() => z.object({
      server: z.string(),
      names: z.array(z.string()).describe('the tools of the body, by name'),
      changed: z.array(z.string()).describe('the tools written: new or different from the current set (all of the body when a set whose build failed is sent again)'),
      removed: z.array(z.string()).describe('tools removed by prune'),
      tool_names: z.array(z.string()).describe('the whole tool set after the publish'),
      published: z.boolean().describe('false when nothing changed: no version was made'),
      build_id: z.string().optional().describe('absent when nothing changed'),
      version: z.number().int().optional().describe('the new version; when nothing changed, the version holding this set'),
      note: Note,
    })),
  }),
  deleteTool: route({
    id: 'mcpservers.tools.delete',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/mcpservers/{name}/tools/{tool}',
    summary: 'Remove a tool: builds a new version without it',
    auth: 'any',
    params: McpToolParams,
    status: 202,
    response: lazySchema(() => z.object({ server: z.string(), name: z.string(), deleted: z.boolean(), build_id: z.string(), version: z.number().int().optional(), note: Note })),
  }),
  versions: route({
    id: 'mcpservers.versions.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/mcpservers/{name}/versions',
    summary: "The server's versions, newest first",
    auth: 'any',
    params: McpServerParams,
    status: 200,
    response: lazySchema(() => z.object({ server: z.string(), versions: z.array(McpVersion) })),
  }),
  rollback: route({
    id: 'mcpservers.versions.rollback',
    method: 'POST',
    path: '/v1/projects/{projectID}/mcpservers/{name}/versions/{version}:rollback',
    summary: "Re-point the server at a version's recorded image, without a rebuild",
    auth: 'any',
    params: McpVersionParams,
    status: 200,
    response: lazySchema(() => z.object({ server: z.string(), version: z.number().int(), image: z.string(), rolled_back: z.boolean(), note: Note })),
  }),
  yank: route({
    id: 'mcpservers.versions.yank',
    method: 'POST',
    path: '/v1/projects/{projectID}/mcpservers/{name}/versions/{version}:yank',
    summary: 'Retire a version as a rollback target (it is kept)',
    auth: 'any',
    params: McpVersionParams,
    status: 200,
    response: lazySchema(() => z.object({ server: z.string(), version: z.number().int(), yanked: z.boolean() })),
  }),
  unyank: route({
    id: 'mcpservers.versions.unyank',
    method: 'POST',
    path: '/v1/projects/{projectID}/mcpservers/{name}/versions/{version}:unyank',
    summary: 'Make a yanked version a rollback target again',
    auth: 'any',
    params: McpVersionParams,
    status: 200,
    response: lazySchema(() => z.object({ server: z.string(), version: z.number().int(), yanked: z.boolean() })),
  }),
  /**
   * A member tries a tool from the terminal: the bearer never leaves the platform, so the daemon
   * makes the JSON-RPC call on the member's behalf (docs/decisions/mcp.md).
   */
  call: route({
    id: 'mcpservers.tools.call',
    method: 'POST',
    path: '/v1/projects/{projectID}/mcpservers/{name}/tools/{tool}:call',
    summary: "Call one tool of the running version with arguments (the protocol's tools/call result)",
    auth: 'any',
    params: McpToolParams,
    body: lazySchema(() => z.strictObject({ arguments: z.record(z.string(), z.unknown()).optional() })),
    bodyLimit: MCP_PUBLISH_BODY_LIMIT,
    status: 200,
    response: lazySchema(() => z.object({
      server: z.string(),
      tool: z.string(),
      version: z.number().int(),
      content: z.array(z.record(z.string(), z.unknown())),
      structuredContent: z.unknown().optional(),
      isError: z.boolean(),
      duration_ms: z.number().int(),
    })),
  }),
};

/** One entry of the MCP_SERVERS variable agents receive (spec 2 §4.2). */
export const McpServersEntry = lazySchema(() => z.object({ name: z.string(), url: z.string(), bearer: z.string() }));
