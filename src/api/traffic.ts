import { z } from 'zod';
import { lazySchema } from './lazy.js';

/**
 * One target of a traffic split, Knative's shape (serverless services, spec 2 §4.3, and agent
 * revisions): a named revision or the latest ready one. The rules (sum 100, duplicates, unknown
 * revisions) are checked by the daemon (src/daemon/traffic/check.ts) so every error reads the same.
 */
export const TrafficTarget = lazySchema(() => z.strictObject({
  revision_name: z.string().optional(),
  latest_revision: z.boolean().optional(),
  percent: z.number().optional().describe('0 to 100; the split sums to 100'),
  tag: z.string().optional().describe('its own address http://<tag>-<name>-<short>.apps.localhost:<port>'),
}));
export type TrafficTarget = z.infer<typeof TrafficTarget>;
