import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { bucketArg } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';

export default class ObjectsList extends BaseCommand {
  static override summary = "List a project bucket's objects by key";
  static override examples = ['<%= config.bin %> objects list uploads', '<%= config.bin %> objects list uploads --prefix images/ --json'];
  static override args = { bucket: bucketArg };
  static override flags = { project: projectFlag, prefix: Flags.string({ description: 'only keys starting with this' }), ...pageFlags };

  async run() {
    const { args, flags } = await this.parse(ObjectsList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await callTrigger((await this.client()).call(triggerRoutes.listObjects, { params: { projectID, bucket: args.bucket }, query: { ...pageQuery(flags), prefix: flags.prefix } }));
    this.table(
      res.objects,
      [
        { header: 'key', get: (o) => o.key },
        { header: 'size', get: (o) => String(o.size) },
        { header: 'updated', get: (o) => o.updated_at },
      ],
      `no objects; store one with \`${this.config.bin} objects put ${args.bucket} FILE\``,
    );
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
