import type { AreaContext } from '../../area.js';
import type { GaugeSample } from '../../metrics/gauges.js';

/**
 * Messages not yet acknowledged per subscription, for `/metrics`: one series per subscription
 * (project short, topic, name), as many as the subscriptions the quotas allow.
 */
export function messagingMetricsReader(ctx: AreaContext) {
  return {
    area: 'messaging',
    read(): GaugeSample[] {
      const rows = ctx.db
        .prepare(
          `SELECT p.short AS project, t.name AS topic, s.name AS subscription,
                  (SELECT COUNT(*) FROM msg_pending m WHERE m.sub_id = s.id) AS backlog
             FROM msg_subscriptions s JOIN msg_topics t ON t.id = s.topic_id JOIN acct_projects p ON p.id = s.project_id
            WHERE s.state <> 'deleting'`,
        )
        .all() as Array<{ project: string; topic: string; subscription: string; backlog: number }>;
      return rows.map((r) => ({ name: 'platform_messaging_backlog_messages', labels: { project: r.project, topic: r.topic, subscription: r.subscription }, value: r.backlog }));
    },
  };
}
