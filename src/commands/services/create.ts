import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg, serviceFields, serviceFlags, waitFlags, waitWithProgress } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call, createBody } from '../../client/services.js';

export default class ServicesCreate extends BaseCommand {
  static override summary = 'Create a service from a container image; it scales to zero when idle and starts on the next request';
  static override description =
    'The first revision (NAME-00001) starts at once; --wait waits until it serves. A service is private unless --publish: its public address then answers (http://NAME-SHORT.apps.localhost:PORT on a laptop), while the internal address always works from workloads. Plain --env values are readable by anyone who can read the service; put credentials in project secrets and read them with --secret-env VAR=SECRET. To run a source folder instead of an image, use `platform services deploy DIR`.';
  static override examples = [
    '<%= config.bin %> services create hello --image platform-node:local --publish --wait',
    '<%= config.bin %> services create api --image ghcr.io/acme/api:1.4 --env MODE=prod --secret-env DATABASE_URL=db-url --port 3000',
    '<%= config.bin %> services create worker --image worker:dev --min-scale 1 --max-scale 4 --concurrency 1 --timeout 60',
    '<%= config.bin %> services create hello --image platform-node:local --json',
  ];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag, ...serviceFlags(), ...waitFlags };

  async run() {
    const { args, flags } = await this.parse(ServicesCreate);
    const projectID = this.projectRef(flags.project, flags.context);
    // Flags are checked before anything connects (a usage error never starts the daemon).
    const body = createBody(args.name, flags);
    const client = await this.client();
    const ref = { projectID, name: args.name };
    let service = await call(client.call(serverlessRoutes.create, { params: { projectID }, body }), ref);
    if (flags.wait) service = (await waitWithProgress(client, ref, { json: this.jsonEnabled(), timeout: flags['wait-timeout'] })).service;
    this.fields(serviceFields(service));
    if (!flags.wait) this.note(`\nstarting ${service.latest_created_revision}; follow it with \`${this.config.bin} services get ${args.name}\` (or create with --wait)`);
    return service;
  }
}
