import { Args, Flags } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { messagingRoutes, MAX_PUBLISH_MESSAGES, type PublishMessage } from '../api/messaging.js';
import { parseAttrs, ProjectCommand, projectFlag } from '../cli/messaging.js';
import { UsageError } from '../client/errors.js';

export default class Publish extends ProjectCommand {
  static override summary = 'Publish messages to a topic';
  static override description =
    'Publishes one message from --text or --data (base64), or many from --file: NDJSON, one JSON message per line ' +
    '({"text"|"data", "attributes", "key"}), sent in batches of 100. --attr and --key apply to every message.';
  static override examples = [
    '<%= config.bin %> publish orders --text "order 42 paid" --attr kind=payment --key order-42',
    '<%= config.bin %> publish orders --data aGVsbG8=',
    '<%= config.bin %> publish orders --file events.ndjson',
    'cat events.ndjson | <%= config.bin %> publish orders --file -',
  ];
  static override args = { topic: Args.string({ description: 'topic name', required: true }) };
  static override flags = {
    project: projectFlag,
    text: Flags.string({ description: 'message text', exclusive: ['data', 'file'] }),
    data: Flags.string({ description: 'message payload, base64', exclusive: ['text', 'file'] }),
    file: Flags.string({ description: 'NDJSON file of messages ("-" reads stdin)', exclusive: ['text', 'data'] }),
    attr: Flags.string({ description: 'attribute NAME=VALUE (repeatable)', multiple: true }),
    key: Flags.string({ description: 'ordering key' }),
  };

  async run() {
    const { args, flags } = await this.parse(Publish);
    if (flags.data !== undefined && !isBase64(flags.data)) {
      throw new UsageError('--data takes the payload in base64', 'for plain text or JSON use --text; to encode bytes: `printf \'...\' | base64 -w0`');
    }
    const attributes = parseAttrs(flags.attr);
    const common = (m: PublishMessage): PublishMessage => ({
      ...m,
      ...(attributes || m.attributes ? { attributes: { ...m.attributes, ...attributes } } : {}),
      ...(flags.key ? { key: flags.key } : {}),
    });
    const messages = (flags.file ? readNdjson(flags.file) : [flags.text !== undefined ? { text: flags.text } : flags.data !== undefined ? { data: flags.data } : {}]).map(common);
    const client = await this.client();
    const projectID = this.project(flags.project, flags.context);
    const ids: string[] = [];
    let error: string | undefined;
    for (let i = 0; i < messages.length && !error; i += MAX_PUBLISH_MESSAGES) {
      const res = await client.call(messagingRoutes.publish, {
        params: { projectID, topic: args.topic },
        body: { messages: messages.slice(i, i + MAX_PUBLISH_MESSAGES) },
      });
      ids.push(...res.message_ids);
      error = res.error;
    }
    this.table(ids.map((id) => ({ id })), [{ header: 'message id', get: (r) => r.id }]);
    if (error) {
      this.note(`warning: published ${ids.length} of ${messages.length}: ${error}`);
      process.exitCode = 1;
    }
    return { message_ids: ids, published: ids.length, requested: messages.length, ...(error ? { error } : {}) };
  }
}

/** The API's rule (RFC 4648, standard alphabet, padded), checked first so a person is told which flag to use. */
const isBase64 = (s: string) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);

function readNdjson(file: string): PublishMessage[] {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  return text
    .split('\n')
    .map((l, i) => [l.trim(), i + 1] as const)
    .filter(([l]) => l)
    .map(([l, n]) => {
      try {
        const m = JSON.parse(l) as unknown;
        if (!m || typeof m !== 'object' || Array.isArray(m)) throw new Error('not an object');
        return m as PublishMessage;
      } catch (e) {
        throw new UsageError(`${file} line ${n}: not a JSON message object (${(e as Error).message})`);
      }
    });
}
