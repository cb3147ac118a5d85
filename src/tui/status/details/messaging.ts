import { messagingRoutes, type SubscriptionView } from '../../../api/messaging.js';
import { formatBytes } from '../model.js';
import type { StatusTarget } from '../loaders.js';
import { ageText, linesOf, oneLine, settle, when } from './read.js';

const oldest = (s: SubscriptionView) => (s.stats.oldest_unacked_age_seconds === undefined ? 'none waiting' : ageText(s.stats.oldest_unacked_age_seconds));

/** A topic: settings, counters and its subscriptions, each with its backlog. */
export async function topicDetails(t: StatusTarget, topic: string): Promise<string[]> {
  const params = { projectID: t.project, topic };
  const [got, subs] = await Promise.all([
    settle(t.client.call(messagingRoutes.getTopic, { params })),
    settle(t.client.call(messagingRoutes.listSubscriptions, { params, query: { page_size: 200 } })),
  ]);
  return [
    ...linesOf(`topic ${topic}`, got, (tp) => [
      `topic ${tp.name}: ${tp.state}${tp.message ? ` · ${oneLine(tp.message)}` : ''}`,
      `address ${tp.address}`,
      `retention max ${tp.max_bytes}${tp.max_age ? ` · max age ${tp.max_age}` : ''} · when full discard ${tp.discard}`,
      `published ${tp.stats.published} (${formatBytes(tp.stats.published_bytes)}) · stored ${formatBytes(tp.stats.storage_bytes)} · backlog ${formatBytes(tp.stats.backlog_bytes)} · producers ${tp.stats.producers}`,
    ]),
    '',
    'subscriptions:',
    ...linesOf('  subscriptions', subs, ({ subscriptions }) =>
      subscriptions.length
        ? subscriptions.map((s) => `  ${s.name.padEnd(24)} ${s.deliver.mode.padEnd(5)} backlog ${String(s.stats.backlog).padEnd(6)} unacked ${String(s.stats.unacknowledged).padEnd(6)} oldest ${oldest(s)}`)
        : ['  none: messages published now are kept for nobody'],
    ),
  ];
}

/** A subscription: its topic, ack deadline, push endpoint or pull, dead-letter policy, backlog and oldest unacknowledged age. */
export async function subscriptionDetails(t: StatusTarget, topic: string, sub: string): Promise<string[]> {
  const got = await settle(t.client.call(messagingRoutes.getSubscription, { params: { projectID: t.project, topic, sub } }));
  return linesOf(`subscription ${topic}/${sub}`, got, (s) => [
    `subscription ${s.name} of topic ${s.topic}: ${s.state}${s.message ? ` · ${oneLine(s.message)}` : ''}`,
    `delivery ${s.deliver.mode === 'push' && s.deliver.push ? `push to ${s.deliver.push.url} (${s.deliver.push.content_mode})` : 'pull'} · type ${s.type}${s.active_type && s.active_type !== s.type ? ` (active ${s.active_type})` : ''}`,
    `ack deadline ${s.ack_deadline_seconds}s · max unacked ${s.max_ack_pending}`,
    // Without a dead-letter topic only push gives up on a message (after max_deliver attempts).
    `dead letter ${s.dead_letter ? `to topic ${s.dead_letter.topic} after ${s.dead_letter.after_attempts} attempts` : s.deliver.mode === 'push' ? `none (dropped after ${s.max_deliver} attempts)` : 'none'}`,
    '',
    `backlog ${s.stats.backlog} · unacked ${s.stats.unacknowledged} · oldest unacked ${oldest(s)}`,
    `delivered ${s.stats.delivered} · consumers ${s.stats.consumers} · redeliveries ${s.stats.redeliver_rate.toFixed(2)}/s`,
    `address ${s.address} · created ${when(s.created_at)}`,
  ]);
}
