import { Args, Flags } from '@oclif/core';
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { bucketArg } from '../../cli/triggers.js';
import { triggerRoutes, type ObjectView } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';
import { UsageError } from '../../client/errors.js';

export default class ObjectsPut extends BaseCommand {
  static override summary = "Store a file in a project bucket; the bucket's object-store triggers fire with its bytes";
  static override examples = ['<%= config.bin %> objects put uploads ./photo.jpg', '<%= config.bin %> objects put uploads ./photo.jpg --key images/2026/photo.jpg --json'];
  static override args = { bucket: bucketArg, file: Args.string({ description: 'local file to upload', required: true }) };
  static override flags = { project: projectFlag, key: Flags.string({ description: 'object key (default: the file name)' }) };

  async run() {
    const { args, flags } = await this.parse(ObjectsPut);
    let data: Buffer;
    try {
      if (!statSync(args.file).isFile()) throw new Error('not a file');
      data = readFileSync(args.file);
    } catch {
      throw new UsageError(`${args.file} is not a readable file`, 'give the path of a file to upload');
    }
    const key = flags.key ?? basename(args.file);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await callTrigger(client.pathFor(triggerRoutes.putObject, { projectID, bucket: args.bucket, key }));
    const o = (await (await callTrigger(client.request('PUT', path, { rawBody: new Uint8Array(data), headers: { 'content-type': 'application/octet-stream' } }))).json()) as ObjectView;
    this.print(`stored ${o.bucket}/${o.key} (${o.size} bytes)`);
    return o;
  }
}
