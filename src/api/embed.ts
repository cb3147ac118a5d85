import { z } from 'zod';
import { route } from './contract.js';
import { Timestamp } from './common.js';
import { AgentName } from './agents.js';
import { lazySchema } from './lazy.js';

/**
 * The embeddable widget (spec 1 §4.12 /embed get, put, delete, rotate-key, and the anonymous
 * GET /v1/embed/{key}/config and POST /v1/embed/{key}/invoke; bodies not shown). Shaped like
 * chat-widget products (Intercom, Botpress, Dialogflow Messenger): an origin allow list, a
 * greeting and a theme; the key in the page identifies the widget and grants nothing else.
 */
export const Origin = lazySchema(() => z
  .string()
  .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be an origin: scheme://host[:port], no path'));
export const EMBED_KEY_RE = /^emb_[A-Za-z0-9]{32}$/;
export const EMBED_RATE_DEFAULT = 20;
/**
 * The widget's end user: a random secret the widget keeps in the browser's localStorage and sends
 * with every call. The daemon never stores it: the session owner is WIDGET_USER_PREFIX plus a
 * digest of it (docs/decisions/sessions.md, Widget end users).
 */
export const END_USER_RE = /^[A-Za-z0-9_-]{24,128}$/;
export const WIDGET_USER_PREFIX = 'widget-';
const EndUser = lazySchema(() => z.string().regex(END_USER_RE, "must be the widget's end-user id: 24 to 128 letters, digits, _ or -"));

const Theme = lazySchema(() => z.strictObject({
  title: z.string().max(100).optional(),
  color: z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be #rrggbb').optional(),
  position: z.enum(['bottom-right', 'bottom-left']).optional(),
}));

export const EmbedView = lazySchema(() => z.object({
  agent: z.string(),
  key: z.string(),
  allowed_origins: z.array(z.string()),
  greeting: z.string(),
  theme: Theme,
  rate_limit_per_minute: z.number().int(),
  /** The one-line HTML that embeds the widget (the daemon's public URL as seen by this request). */
  snippet: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
}));

const NameParams = lazySchema(() => z.object({ name: AgentName }));
const ProjectQuery = lazySchema(() => z.object({ project: z.string().optional() }));
const KeyParams = lazySchema(() => z.object({ key: z.string().regex(EMBED_KEY_RE, 'must be an embed key (emb_ and 32 letters or digits)') }));
const KeySessionParams = lazySchema(() => KeyParams.extend({ id: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must match ^[A-Za-z0-9_.-]{1,128}$') }));

/** A past conversation as its end user sees it: what was said, not the harness's internals. */
export const WidgetSession = lazySchema(() => z.object({ id: z.string(), turn_count: z.number().int(), created_at: Timestamp, updated_at: Timestamp }));
export const WidgetTurn = lazySchema(() => z.object({ index: z.number().int(), message: z.string(), output: z.string(), finished_at: Timestamp }));

export const embedRoutes = {
  get: route({ id: 'embed.get', method: 'GET', path: '/v1/agents/{name}/embed', summary: "The agent's widget settings and key", auth: 'any', params: NameParams, query: ProjectQuery, status: 200, response: EmbedView }),
  put: route({
    id: 'embed.put',
    method: 'PUT',
    path: '/v1/agents/{name}/embed',
    summary: 'Enable or replace the widget: allowed origins, greeting, theme, per-address rate limit',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({
      allowed_origins: z.array(Origin).min(1).max(50),
      greeting: z.string().max(500).optional(),
      theme: Theme.optional(),
      rate_limit_per_minute: z.number().int().min(1).max(600).optional(),
    })),
    status: 200,
    response: EmbedView,
  }),
  delete: route({ id: 'embed.delete', method: 'DELETE', path: '/v1/agents/{name}/embed', summary: 'Disable the widget (its key stops working)', auth: 'any', params: NameParams, query: ProjectQuery, status: 200, response: lazySchema(() => z.object({ agent: z.string(), deleted: z.literal(true) })) }),
  rotateKey: route({
    id: 'embed.rotateKey',
    method: 'POST',
    path: '/v1/agents/{name}/embed/rotate-key',
    summary: 'Replace the widget key; the old one stops working at once',
    auth: 'any',
    params: NameParams,
    query: ProjectQuery,
    body: lazySchema(() => z.strictObject({})),
    status: 200,
    response: EmbedView,
  }),
  publicConfig: route({
    id: 'embed.config',
    method: 'GET',
    path: '/v1/embed/{key}/config',
    summary: 'Anonymous: what the widget shows (greeting, theme); Origin must be allowed',
    auth: 'none',
    params: KeyParams,
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), greeting: z.string(), theme: Theme })),
  }),
  publicInvoke: route({
    id: 'embed.invoke',
    method: 'POST',
    path: '/v1/embed/{key}/invoke',
    summary: "Anonymous: talk to the agent from an allowed Origin ({message, session_id?, end_user}: the session belongs to end_user), rate-limited per client address",
    auth: 'none',
    params: KeyParams,
    status: 200,
    response: lazySchema(() => z.object({}).passthrough()),
  }),
  // Reads by POST: the end-user secret travels in a text/plain JSON body (a CORS simple request, no
  // preflight, and never in a URL that logs keep), as the widget's invoke does.
  publicSessions: route({
    id: 'embed.sessions',
    method: 'POST',
    path: '/v1/embed/{key}/sessions:list',
    summary: "Anonymous: the widget end user's own sessions, newest first, paged; Origin must be allowed",
    auth: 'none',
    params: KeyParams,
    body: lazySchema(() => z.strictObject({ end_user: EndUser, page_size: z.number().int().min(1).max(100).optional(), page_token: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({ sessions: z.array(WidgetSession), next_page_token: z.string() })),
  }),
  publicSession: route({
    id: 'embed.session',
    method: 'POST',
    path: '/v1/embed/{key}/sessions/{id}:get',
    summary: "Anonymous: one of the widget end user's own sessions with its turns; anyone else's is 404 like a missing one",
    auth: 'none',
    params: KeySessionParams,
    body: lazySchema(() => z.strictObject({ end_user: EndUser })),
    status: 200,
    response: lazySchema(() => z.object({ session: WidgetSession, turns: z.array(WidgetTurn) })),
  }),
  script: route({ id: 'embed.script', method: 'GET', path: '/v1/embed/widget.js', summary: 'The widget script (text/javascript)', auth: 'none', status: 200, response: lazySchema(() => z.string()) }),
};
