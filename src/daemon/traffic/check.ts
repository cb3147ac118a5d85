import type { TrafficTarget } from '../../api/traffic.js';
import { badRequest } from '../http/errors.js';

const TAG_RE = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Traffic validation (spec 2 §4.3): sum not 100, percent out of range, target needs revision_name
 * or latest_revision, both set, duplicate target, duplicate tag, unknown revision. `exists`
 * says whether a named revision exists (including one this request creates).
 */
export function checkTraffic(traffic: TrafficTarget[], service: string, exists: (revision: string) => boolean): TrafficTarget[] {
  const targets = new Set<string>();
  const tags = new Set<string>();
  let sum = 0;
  traffic.forEach((t, i) => {
    const at = `traffic validation: traffic[${i}]`;
    const percent = t.percent ?? 0;
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) throw badRequest(`${at}: percent ${t.percent} is out of range (an integer from 0 to 100)`);
    const named = t.revision_name !== undefined && t.revision_name !== '';
    const latest = t.latest_revision === true;
    if (named && latest) throw badRequest(`${at}: set either revision_name or latest_revision true, not both`);
    if (!named && !latest) throw badRequest(`${at}: a target needs revision_name or latest_revision true`);
    const key = latest ? '(latest revision)' : t.revision_name!;
    if (targets.has(key)) throw badRequest(`${at}: duplicate target ${key}`);
    targets.add(key);
    if (t.tag !== undefined) {
      if (!TAG_RE.test(t.tag) || `${t.tag}-${service}`.length > 63) {
        throw badRequest(`${at}: invalid tag ${JSON.stringify(t.tag)}: lowercase letters, digits and hyphens, starting with a letter; <tag>-<service> at most 63 characters`);
      }
      if (tags.has(t.tag)) throw badRequest(`${at}: duplicate tag ${t.tag}`);
      tags.add(t.tag);
    }
    if (named && !exists(t.revision_name!)) throw badRequest(`${at}: unknown revision ${t.revision_name}`);
    sum += percent;
  });
  if (sum !== 100) throw badRequest(`traffic validation: percentages sum to ${sum}; they must sum to 100`);
  return traffic.map((t) => ({
    ...(t.latest_revision ? { latest_revision: true } : { revision_name: t.revision_name! }),
    percent: t.percent ?? 0,
    ...(t.tag !== undefined ? { tag: t.tag } : {}),
  }));
}

