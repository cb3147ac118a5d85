import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../cli/flags.js';
import { bucketArg } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';
import { UsageError } from '../../client/errors.js';

export default class ObjectsDelete extends BaseCommand {
  static override summary = 'Delete an object from a project bucket';
  static override examples = ['<%= config.bin %> objects delete uploads notes.txt', '<%= config.bin %> objects delete uploads notes.txt --yes --json'];
  static override args = { bucket: bucketArg, key: Args.string({ description: 'object key', required: true }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(ObjectsDelete);
    if (this.jsonEnabled() && !flags.yes) throw new UsageError(`deleting ${args.key} needs confirmation`, 'pass --yes');
    await confirm(flags.yes, `delete ${args.bucket}/${args.key}`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await callTrigger(client.pathFor(triggerRoutes.deleteObject, { projectID, bucket: args.bucket, key: args.key }));
    await callTrigger(client.request('DELETE', path));
    this.print(`deleted ${args.bucket}/${args.key}`);
    return { bucket: args.bucket, key: args.key, deleted: true };
  }
}
