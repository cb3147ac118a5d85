import { z } from 'zod';
import { route } from './contract.js';
import { PageQuery, Timestamp, Uuid } from './common.js';
import { ProjectParams } from './projects.js';

/** One audit row (spec 1 §4.11 leaves the shape open; recorded in docs/decisions). */
export const AuditEntry = z.object({
  id: Uuid,
  ts: Timestamp,
  actor: z.string().describe('e-mail of the person or machine credential that acted'),
  action: z.string().describe('dotted verb, e.g. invitation.create'),
  target: z.string(),
  details: z.record(z.string(), z.unknown()),
  request_id: z.string().optional(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const auditRoutes = {
  list: route({
    id: 'audit.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/audit',
    summary: "A project's audit log, newest first",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: z.object({ entries: z.array(AuditEntry), next_page_token: z.string().optional() }),
  }),
};
