import type { TriggerCreateBody, TriggerPatchBody, TriggerView } from '../api/triggers.js';
import { ApiCallError, UsageError } from './errors.js';

/**
 * The CLI side of triggers and local buckets (spec 2 §2.4, §4.4): request bodies from flags and
 * next steps for failures. Nothing here knows oclif; commands render what it returns.
 */

export interface SourceFlags {
  cron?: string;
  tz?: string;
  payload?: string;
  topic?: string;
  subscription?: string;
  bucket?: string;
  prefix?: string;
}

/** Exactly one source: --cron (with --tz, --payload), --topic (with --subscription) or --bucket (with --prefix). */
export function sourceFromFlags(f: SourceFlags, required: boolean): TriggerCreateBody['source'] | undefined {
  const kinds = [f.cron !== undefined && 'cron', f.topic !== undefined && 'topic', f.bucket !== undefined && 'bucket'].filter(Boolean) as string[];
  if (kinds.length > 1) throw new UsageError(`--${kinds.join(' and --')} name different sources`, 'give one of --cron, --topic or --bucket');
  const stray = (names: Array<keyof SourceFlags>, owner: string) => {
    for (const n of names) if (f[n] !== undefined) throw new UsageError(`--${n === 'tz' ? 'tz' : n} needs --${owner}`, `e.g. --${owner} ... --${n} ...`);
  };
  if (f.cron === undefined) stray(['tz', 'payload'], 'cron');
  if (f.topic === undefined) stray(['subscription'], 'topic');
  if (f.bucket === undefined) stray(['prefix'], 'bucket');
  if (f.cron !== undefined) {
    if (f.payload !== undefined) {
      try {
        JSON.parse(f.payload);
      } catch {
        throw new UsageError('--payload is not JSON', `e.g. --payload '{"job":"nightly"}'`);
      }
    }
    return { type: 'schedule', schedule: { cron: f.cron, ...(f.tz ? { time_zone: f.tz } : {}), ...(f.payload !== undefined ? { payload: f.payload } : {}) } };
  }
  if (f.topic !== undefined) return { type: 'pubsub', pubsub: { topic: f.topic, ...(f.subscription ? { subscription: f.subscription } : {}) } };
  if (f.bucket !== undefined) return { type: 'objectstore', objectstore: { bucket: f.bucket, ...(f.prefix ? { prefix: f.prefix } : {}) } };
  if (required) throw new UsageError('a trigger needs a source', 'give --cron EXPR, --topic TOPIC or --bucket BUCKET');
  return undefined;
}

/** `--backoff INITIAL[,MAXIMUM[,MULTIPLIER]]` in seconds, e.g. 1,60,2. */
export function parseBackoff(v: string | undefined): NonNullable<TriggerCreateBody['retry']>['backoff'] {
  if (v === undefined) return undefined;
  const parts = v.split(',').map((s) => s.trim().replace(/s$/, ''));
  const nums = parts.map(Number);
  if (parts.length > 3 || parts.some((p) => p === '') || nums.some((n) => !Number.isFinite(n))) {
    throw new UsageError(`--backoff ${v} is not INITIAL[,MAXIMUM[,MULTIPLIER]]`, 'e.g. --backoff 1,60,2 (seconds, seconds, factor)');
  }
  return { initial_seconds: nums[0], ...(nums[1] !== undefined ? { maximum_seconds: nums[1] } : {}), ...(nums[2] !== undefined ? { multiplier: nums[2] } : {}) };
}

export function retryFromFlags(f: { 'max-attempts'?: number; backoff?: string }): TriggerCreateBody['retry'] | undefined {
  const backoff = parseBackoff(f.backoff);
  if (f['max-attempts'] === undefined && !backoff) return undefined;
  return { ...(f['max-attempts'] !== undefined ? { max_attempts: f['max-attempts'] } : {}), ...(backoff ? { backoff } : {}) };
}

export function patchFromFlags(f: SourceFlags & { target?: string; path?: string; 'max-attempts'?: number; backoff?: string }): TriggerPatchBody {
  const body: TriggerPatchBody = {};
  if (f.target !== undefined || f.path !== undefined) body.target = { ...(f.target ? { service: f.target } : {}), ...(f.path ? { path: f.path } : {}) };
  const source = sourceFromFlags(f, false);
  if (source) body.source = source;
  const retry = retryFromFlags(f);
  if (retry) body.retry = retry;
  if (!Object.keys(body).length) throw new UsageError('nothing to update', 'give --target, --path, a source (--cron/--topic/--bucket), --max-attempts or --backoff');
  return body;
}

/** One line naming a trigger's source, for tables. */
export function sourceSummary(t: TriggerView): string {
  const s = t.source;
  if (s.schedule) return `cron ${s.schedule.cron} (${s.schedule.time_zone})`;
  if (s.pubsub) return `topic ${s.pubsub.topic} (subscription ${s.pubsub.subscription})`;
  if (s.objectstore) return `bucket ${s.objectstore.bucket}${s.objectstore.prefix ? ` prefix ${s.objectstore.prefix}` : ''}`;
  return s.type;
}

/** What a failed call should make the user do next, instead of the bare API message. */
export function explainTrigger(err: unknown, name?: string): never {
  if (!(err instanceof ApiCallError)) throw err;
  const m = err.message.toLowerCase();
  let next = err.next;
  if (err.status === 404) {
    if (/^target/.test(m)) next = 'the target must be a service (`platform services list`) or an agent or function (`platform agents list`) of this project';
    else if (/topic|subscription/.test(m)) next = 'list the topics with `platform topics list`';
    else if (/project/.test(m)) next = 'check --project (`platform projects list`)';
    else if (/object/.test(m)) next = 'list the bucket with `platform objects list BUCKET`';
    else next = 'list the triggers with `platform triggers list` (or check --project)';
  } else if (err.status === 409 && /exists/.test(m)) {
    next = `choose another name, or change it with \`platform triggers update ${name ?? 'NAME'} ...\``;
  } else if (err.status === 400 && /cron/.test(m)) {
    next = "five fields: minute hour day-of-month month day-of-week, e.g. --cron '0 3 * * *' (or six with seconds first)";
  } else if (err.status === 400 && /time_zone/.test(m)) {
    next = 'an IANA zone name, e.g. --tz Europe/Paris or --tz America/New_York';
  }
  throw new ApiCallError(err.status, err.message, err.requestId, err.body, next);
}

export async function callTrigger<T>(p: Promise<T>, name?: string): Promise<T> {
  try {
    return await p;
  } catch (e) {
    explainTrigger(e, name);
  }
}
