import { MCP_PUBLISH_BODY_LIMIT, MCP_PUBLISH_SET_MAX_TOOLS, type McpPublishBody, type McpPublishSetBody } from '../../../api/mcp.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { badRequest, tooLarge } from '../../http/errors.js';
import { Reply } from '../../http/router.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { admin, checkToolName, handlerRequired, serverOr404, snapshot, type Deps } from './service.js';
import { mcpStore, type ToolRow } from './store.js';

/**
 * PUT tools: several tool modules in one request, one new version (`platform mcp publish SERVER
 * DIR`, issue 18). Every tool is checked as the single PUT checks it, before anything is written;
 * then the changed tools (and, with prune, the removals) and the snapshot share one transaction.
 */

/** A tool as it is compared: what a version snapshots, with key order and schema key order ignored. */
interface Normal {
  handler: string;
  description: string | null;
  schema: string | null;
  keys: string;
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

const keysOf = (b: McpPublishBody) => [...new Set(b.credential_keys ?? b.credentialKeys ?? [])];

const fromBody = (b: McpPublishBody): Normal => ({
  handler: b.handler!,
  description: b.description ?? null,
  schema: b.schema ? canonical(b.schema) : null,
  keys: JSON.stringify([...keysOf(b)].sort()),
});

const fromRow = (t: ToolRow): Normal => ({
  handler: t.handler,
  description: t.description,
  schema: t.schema ? canonical(JSON.parse(t.schema)) : null,
  keys: JSON.stringify([...(JSON.parse(t.credential_keys) as string[])].sort()),
});

const same = (a: Normal, b: Normal) => a.handler === b.handler && a.description === b.description && a.schema === b.schema && a.keys === b.keys;

/** Every check of the single PUT, per tool, naming the tool; nothing is written when one fails. */
function validate(body: McpPublishSetBody): string[] {
  const names = Object.keys(body.tools).sort();
  if (!names.length) throw badRequest('tools must name at least one tool (to remove tools, use DELETE .../tools/{tool})');
  if (names.length > MCP_PUBLISH_SET_MAX_TOOLS) throw badRequest(`tools names ${names.length} tools; at most ${MCP_PUBLISH_SET_MAX_TOOLS} in one request`);
  for (const name of names) {
    const prefix = `tools.${name}: `;
    checkToolName(name, prefix);
    const t = body.tools[name]!;
    if (t.handler === undefined || t.handler.trim() === '') throw handlerRequired(prefix);
    if (Buffer.byteLength(JSON.stringify(t)) > MCP_PUBLISH_BODY_LIMIT) throw tooLarge(`${prefix}the tool exceeds ${MCP_PUBLISH_BODY_LIMIT} bytes (a tool module with its settings must fit in 1 MiB, as in a single publish)`);
  }
  return names;
}

export function publishSet(d: Deps, principal: Principal, ref: string, name: string, body: McpPublishSetBody, requestId: string) {
  const access = admin(d, principal, ref);
  const { db, clock } = d.ctx;
  const s = serverOr404(d, access.project.id, name);
  const names = validate(body);
  const result = tx(db, () => {
    const now = isoNow(clock);
    const current = new Map(mcpStore.tools(db, s.id).map((t) => [t.name, t]));
    const changed = names.filter((n) => {
      const row = current.get(n);
      return !row || !same(fromRow(row), fromBody(body.tools[n]!));
    });
    const removed = body.prune ? [...current.keys()].filter((n) => !names.includes(n)) : [];
    const toolNames = [...new Set([...current.keys(), ...names])].filter((n) => !removed.includes(n)).sort();
    // The same set again is a no-op, unless its build failed: sending it again is how a user
    // retries (a broken image build), and a single PUT would build it too.
    if (!changed.length && !removed.length && s.state !== 'failed') {
      return { changed, removed, toolNames, version: undefined };
    }
    const written = changed.length || removed.length ? changed : names;
    for (const n of written) {
      const t = body.tools[n]!;
      mcpStore.upsertTool(db, {
        server_id: s.id,
        name: n,
        handler: t.handler!,
        description: t.description ?? null,
        schema: t.schema ? JSON.stringify(t.schema) : null,
        credential_keys: JSON.stringify(keysOf(t)),
        updated_at: now,
      });
    }
    for (const n of removed) mcpStore.deleteTool(db, s.id, n);
    const v = snapshot(d, s);
    const details = { version: v.version, build_id: v.build_id, set: true };
    for (const n of written) {
      writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'mcpserver.tool.publish', target: `${name}/${n}`, details: { ...details, credential_keys: keysOf(body.tools[n]!) }, requestId });
    }
    for (const n of removed) {
      writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'mcpserver.tool.delete', target: `${name}/${n}`, details, requestId });
    }
    return { changed: written, removed, toolNames, version: v };
  });
  const { changed, removed, toolNames, version: v } = result;
  const answer = { server: name, names, changed, removed, tool_names: toolNames };
  if (!v) {
    const holder = s.state === 'ready' ? s.current_version : mcpStore.newestVersion(db, s.id);
    return new Reply(200, {
      ...answer,
      published: false,
      ...(holder ? { version: holder } : {}),
      note: `nothing changed: ${s.state === 'ready' ? `version ${holder} serves` : `version ${holder} (${s.state}) holds`} this tool set, so no version was made`,
    });
  }
  d.rt.enqueue(v.build_id);
  return new Reply(202, {
    ...answer,
    published: true,
    build_id: v.build_id,
    version: v.version,
    note: `version ${v.version} is building with the whole tool set (${toolNames.join(', ')}); poll GET .../mcpservers/${name} until ready`,
  });
}
