import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { triggerFields, triggerFlags } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger, retryFromFlags, sourceFromFlags } from '../../client/triggers.js';

export default class TriggersCreate extends BaseCommand {
  static override summary = 'Create a trigger: a schedule (--cron), a topic (--topic) or a bucket (--bucket) that POSTs to a service, function or agent';
  static override examples = [
    `<%= config.bin %> triggers create nightly --target report --cron '0 3 * * *' --tz Europe/Paris --payload '{"job":"nightly"}'`,
    '<%= config.bin %> triggers create on-order --target orders-fn --topic orders --max-attempts 5 --backoff 1,30,2',
    '<%= config.bin %> triggers create on-upload --target thumbs --bucket uploads --prefix images/ --json',
  ];
  static override args = { name: Args.string({ description: 'trigger name (1-52: lowercase letters, digits, hyphens)', required: true }) };
  static override flags = { project: projectFlag, ...triggerFlags() };

  async run() {
    const { args, flags } = await this.parse(TriggersCreate);
    const source = sourceFromFlags(flags, true)!;
    const retry = retryFromFlags(flags);
    const projectID = this.projectRef(flags.project, flags.context);
    const body = { name: args.name, target: { service: flags.target, ...(flags.path ? { path: flags.path } : {}) }, source, ...(retry ? { retry } : {}) };
    const t = await callTrigger((await this.client()).call(triggerRoutes.create, { params: { projectID }, body }), args.name);
    this.fields(triggerFields(t));
    return t;
  }
}
