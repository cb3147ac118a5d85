import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg, serviceFields, serviceFlags, waitFlags, waitWithProgress } from '../../cli/services.js';
import { serverlessRoutes, type ServiceView } from '../../api/serverless.js';
import { call, parseEnv, parseSecretEnv, patchBody } from '../../client/services.js';
import { UsageError } from '../../client/errors.js';

export default class ServicesUpdate extends BaseCommand {
  static override summary = 'Change a service: only the flags given; a template change makes a new revision';
  static override description =
    'Image, command, arguments, variables, port and timeout are the template: changing any of them creates the next revision (NAME-00002, ...), which takes the traffic that follows the latest revision once it is ready; while it is not, traffic stays on the last ready one. Scaling and --publish change the service without a new revision. --env KEY=VALUE sets one variable and keeps the others; --env KEY- removes it. The update names the generation it read, so a change made meanwhile by someone else fails instead of being overwritten.';
  static override examples = [
    '<%= config.bin %> services update hello --image platform-node:local --wait',
    '<%= config.bin %> services update api --env MODE=staging --env DEBUG- --secret-env API_TOKEN=api-token',
    '<%= config.bin %> services update api --min-scale 1 --max-scale 20',
    '<%= config.bin %> services update api --no-publish --json',
  ];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag, ...serviceFlags({ update: true }), ...waitFlags };

  async run() {
    const { args, flags } = await this.parse(ServicesUpdate);
    const projectID = this.projectRef(flags.project, flags.context);
    parseEnv(flags.env, { allowRemove: true });
    parseSecretEnv(flags['secret-env']);
    const client = await this.client();
    const ref = { projectID, name: args.name };
    const params = { projectID, name: args.name };
    const current = await call(client.call(serverlessRoutes.get, { params }), ref);
    const body = patchBody(current, flags);
    if (!Object.keys(body).length) throw new UsageError('nothing to change', `pass at least one flag, e.g. --image IMAGE or --env KEY=VALUE (see \`${this.config.bin} services update --help\`)`);
    const path = await client.pathFor(serverlessRoutes.patch, params);
    let service = await call(
      client.request('PATCH', path, { body, headers: { 'If-Match': String(current.generation) } }).then((r) => r.json() as Promise<ServiceView>),
      ref,
    );
    const revised = service.latest_created_revision !== current.latest_created_revision;
    if (flags.wait) service = (await waitWithProgress(client, ref, { json: this.jsonEnabled(), timeout: flags['wait-timeout'] })).service;
    this.fields(serviceFields(service));
    this.note(revised ? `\nnew revision ${service.latest_created_revision}${flags.wait ? '' : `; follow it with \`${this.config.bin} services get ${args.name}\``}` : '\nno template change: no new revision');
    return service;
  }
}
