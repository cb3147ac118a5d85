import { Args, Flags } from '@oclif/core';
import { messagingRoutes, type PulledMessage } from '../api/messaging.js';
import { ProjectCommand, projectFlag, subRef } from '../cli/messaging.js';
import type { ApiClient } from '../client/api-client.js';

/** Shows a payload as text when it is printable UTF-8, else as base64. */
export function showData(b64: string): string {
  const buf = Buffer.from(b64, 'base64');
  const text = buf.toString('utf8');
  return Buffer.from(text, 'utf8').equals(buf) && !/[\x00-\x08\x0e-\x1f]/.test(text) ? text : `base64:${b64}`;
}

export default class Pull extends ProjectCommand {
  static override summary = 'Pull messages from a subscription (long poll)';
  static override examples = [
    '<%= config.bin %> pull orders/billing',
    '<%= config.bin %> pull billing --topic orders --max 50 --wait 10 --ack',
    '<%= config.bin %> pull orders/billing --json',
  ];
  static override args = { subscription: Args.string({ description: 'TOPIC/SUB (or SUB with --topic)', required: true }) };
  static override flags = {
    project: projectFlag,
    topic: Flags.string({ description: 'topic of the subscription' }),
    max: Flags.integer({ description: 'most messages to return (1-100)', min: 1, max: 100, default: 10 }),
    wait: Flags.integer({ description: 'seconds to wait for the first message (0-20)', min: 0, max: 20, default: 2 }),
    ack: Flags.boolean({ description: 'acknowledge what was received (after printing it)' }),
  };

  async run() {
    const { args, flags } = await this.parse(Pull);
    const { topic, sub } = subRef(args.subscription, flags.topic);
    const params = { projectID: this.project(flags.project, flags.context), topic, sub };
    const client = await this.client();
    const res = await client.call(messagingRoutes.pull, { params, body: { max_messages: flags.max, timeout_ms: flags.wait * 1000 } });
    this.table<PulledMessage>(res.messages, [
      { header: 'id', get: (m) => m.id },
      { header: 'attempt', get: (m) => m.delivery_attempt },
      { header: 'key', get: (m) => m.key },
      { header: 'data', get: (m) => showData(m.data) },
      { header: 'attributes', get: (m) => Object.entries(m.attributes).map(([k, v]) => `${k}=${v}`) },
      ...(flags.ack ? [] : [{ header: 'ack id', get: (m: PulledMessage) => m.ack_id }]),
    ], 'no messages');
    if (!flags.ack && res.messages.length && !this.jsonEnabled()) this.note(await leaseNote(client, params, `${topic}/${sub}`, res.messages.length));
    if (flags.ack && res.messages.length) {
      const a = await client.call(messagingRoutes.acknowledge, { params, body: { ack_ids: res.messages.map((m) => m.ack_id!) } });
      this.note(`acknowledged ${a.acknowledged}`);
      return { ...res, acknowledged: a.acknowledged };
    }
    return res;
  }
}

/**
 * Pull leases what it returns (spec 3 §4.3): a message not acknowledged within the subscription's
 * ack deadline is delivered again. Said on stderr because a first pull that "loses" its messages
 * and sees them again later looks like a bug to whoever expected a queue's pop.
 */
async function leaseNote(client: ApiClient, params: { projectID: string; topic: string; sub: string }, ref: string, count: number): Promise<string> {
  // The deadline makes the sentence concrete; without it the note still says what to do.
  const deadline = await client
    .call(messagingRoutes.getSubscription, { params })
    .then((s) => `${s.ack_deadline_seconds} s`)
    .catch(() => 'the ack deadline');
  const [them, they] = count === 1 ? ['this message is', 'it is'] : [`these ${count} messages are`, 'they are'];
  return `${them} leased, not removed: unless acknowledged within ${deadline} ${they} delivered again. Acknowledge with \`platform ack ${ref} ACK_ID...\` (the ack id column), or pull with --ack.`;
}
