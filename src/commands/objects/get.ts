import { Args, Flags } from '@oclif/core';
import { writeFileSync } from 'node:fs';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { bucketArg } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';

export default class ObjectsGet extends BaseCommand {
  static override summary = "Download an object's bytes (to stdout, or --output FILE)";
  static override examples = ['<%= config.bin %> objects get uploads notes.txt', '<%= config.bin %> objects get uploads images/photo.jpg --output photo.jpg --json'];
  static override args = { bucket: bucketArg, key: Args.string({ description: 'object key', required: true }) };
  static override flags = { project: projectFlag, output: Flags.string({ char: 'o', description: 'write to this file instead of stdout' }) };

  async run() {
    const { args, flags } = await this.parse(ObjectsGet);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await callTrigger(client.pathFor(triggerRoutes.getObject, { projectID, bucket: args.bucket, key: args.key }));
    const data = Buffer.from(await (await callTrigger(client.request('GET', path, { headers: { accept: 'application/octet-stream' } }))).arrayBuffer());
    if (flags.output) writeFileSync(flags.output, data);
    else if (!this.jsonEnabled()) process.stdout.write(data);
    // --json carries the bytes base64-encoded: stdout holds only the result.
    return { bucket: args.bucket, key: args.key, size: data.length, ...(flags.output ? { output: flags.output } : { data_base64: data.toString('base64') }) };
  }
}
