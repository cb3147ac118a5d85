import { z } from 'zod';
import { route } from './contract.js';
import { PageQuery, Timestamp, Uuid } from './common.js';
import { ProjectParams } from './projects.js';
import { lazySchema } from './lazy.js';

/** One audit row (spec 1 §4.11 leaves the shape open; recorded in docs/decisions). */
export const AuditEntry = lazySchema(() => z.object({
  id: Uuid,
  ts: Timestamp,
  actor: z.string().describe('e-mail of the person or machine credential that acted'),
  action: z.string().describe('dotted verb, e.g. invitation.create'),
  target: z.string(),
  details: z.record(z.string(), z.unknown()),
  request_id: z.string().optional(),
}));
export type AuditEntry = z.infer<typeof AuditEntry>;

/** Page parameters plus filters; a page token is bound to the filters it was issued for. */
export const AuditQuery = lazySchema(() => PageQuery.extend({
  action: z
    .string()
    .max(100)
    .optional()
    .describe('an action (auth.login_failed) or a dotted prefix (auth matches auth.login, auth.login_failed, ...)'),
  actor: z.string().max(320).optional().describe('only rows by this actor (e-mail, compared case-insensitively)'),
}));
export type AuditQuery = z.infer<typeof AuditQuery>;

const AuditList = lazySchema(() => z.object({ entries: z.array(AuditEntry), next_page_token: z.string().optional() }));

export const auditRoutes = {
  list: route({
    id: 'audit.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/audit',
    summary: "A project's audit log, newest first",
    auth: 'any',
    params: ProjectParams,
    query: AuditQuery,
    status: 200,
    response: AuditList,
  }),
  platform: route({
    id: 'audit.platform',
    method: 'GET',
    path: '/v1/audit',
    summary:
      'Platform-scope audit log, newest first (platform admin): user roles, password resets, user deletion, org membership, personal keys, sign-ins and failed sign-ins',
    auth: 'platform-admin',
    query: AuditQuery,
    status: 200,
    response: AuditList,
  }),
};
