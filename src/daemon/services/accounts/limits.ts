import type { z } from 'zod';
import type { PlatformLimits, ProjectQuota } from '../../../api/projects.js';
import { DEFAULT_BODY_LIMIT, MiB } from '../../../api/contract.js';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { refuseWorkload } from '../auth/machine-guard.js';
import type { Principal } from '../auth/principal.js';
import { BREAK_GLASS_MAX_MINUTES, BREAK_GLASS_MIN_REASON } from './break-glass.js';
import { quotaRows } from './projects-store.js';
import { accessProject } from './projects.js';
import { DEFAULT_QUOTAS } from './quotas.js';

/**
 * Quota readout of one project: the caps written at creation (§8.3, 0 means unlimited) and live
 * use summed from every area that reports it through ctx.hooks.quotaUsage. A resource no area
 * reports has used 0 with source "none", so a reader can tell "nothing runs" from "not measured".
 */
export function projectQuota(ctx: AreaContext, principal: Principal, ref: string): z.infer<typeof ProjectQuota> {
  const { project } = accessProject(ctx, principal, ref, 'visible');
  refuseWorkload(principal);
  const reports = ctx.hooks.quotaUsage.map((h) => h(project.id));
  return {
    project_id: project.id,
    project_slug: project.slug,
    quotas: quotaRows(ctx.db, project.id).map((q) => {
      const from = reports.filter((r) => r.used[q.resource] !== undefined);
      return {
        resource: q.resource,
        unit: q.unit,
        limit: q.value,
        // CPU comes in fractions of a core: summed to the millicore, so 0.1 + 0.2 reads 0.3.
        used: Math.round(from.reduce((sum, r) => sum + (r.used[q.resource] ?? 0), 0) * 1000) / 1000,
        source: from.length ? from.map((r) => r.source).join(',') : 'none',
        by_source: Object.fromEntries(from.map((r) => [r.source, r.used[q.resource] ?? 0])),
      };
    }),
  };
}

/** Platform-wide limits of spec 1 §8 as numbers (bytes, seconds, minutes, days). */
export function platformLimits(ctx: AreaContext, principal: Principal): z.infer<typeof PlatformLimits> {
  refuseWorkload(principal);
  const { signIn } = ctx.config;
  return {
    bodies: {
      core_json_bytes: DEFAULT_BODY_LIMIT,
      code_upload_bytes: 100 * MiB + MiB,
      source_file_bytes: MiB,
      source_files_per_agent: 200,
      archive_expansion_bytes: 64 * MiB,
      invoke_request_bytes: MiB,
      invoke_response_bytes: 32 * MiB,
      function_event_bytes: 8 * MiB,
      agent_secrets_body_bytes: MiB,
    },
    paging: { page_size_default: PAGE_SIZE_DEFAULT, page_size_max: PAGE_SIZE_MAX, agent_log_lines_default: 500 },
    names: {
      agent: '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
      env_var: '^[A-Za-z_][A-Za-z0-9_]*$',
      service_account: '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
      project_slug: '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
      org_slug: '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
      session_id: '^.{1,128}$',
      user_id: '^.{1,128}$',
    },
    password: { min_length: 12, min_classes: 3 },
    quota_defaults: DEFAULT_QUOTAS.map((q) => ({ resource: q.resource, unit: q.unit, limit: q.value })),
    instance_sizes: [
      { name: 'small', cpu: '500m', memory: '512Mi', default: false },
      { name: 'medium', cpu: '1', memory: '1Gi', default: true },
      { name: 'large', cpu: '2', memory: '2Gi', default: false },
      { name: 'xlarge', cpu: '4', memory: '4Gi', default: false },
    ],
    timeouts: {
      request_seconds_default: 60,
      request_seconds_max: 900,
      response_start_seconds_max: 900,
      scale_to_zero_idle_seconds: 90,
      build_claim_stale_seconds: 30 * 60,
      build_queue_wait_seconds: 30 * 60,
      log_retention_days: 14,
    },
    credentials: {
      session_token_hours: 12,
      api_key_expiry_days_max: 3650,
      break_glass_minutes_default: 240,
      break_glass_minutes_max: BREAK_GLASS_MAX_MINUTES,
      break_glass_reason_min_chars: BREAK_GLASS_MIN_REASON,
      signin_attempts_per_ip: signIn.perIp,
      signin_attempts_per_account: signIn.perAccount,
      signin_window_seconds: signIn.windowMs / 1000,
    },
  };
}
