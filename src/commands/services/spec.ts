import { Flags } from '@oclif/core';
import { writeFileSync } from 'node:fs';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';
import { AbortError } from '../../client/errors.js';

export default class ServicesSpec extends BaseCommand {
  static override summary = 'Print the service as a Knative Service manifest (serving.knative.dev/v1) to apply on a cluster';
  static override description =
    'The YAML holds what configures the service (template, scaling annotations, split, visibility) and none of the platform\'s own fields. Values of variables whose name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or PRIVATE read ***REDACTED***: fill them in (better: move them into a Kubernetes Secret) before `kubectl apply -f`. A split that pins older revisions lists those revisions first, each as its own document, so applying the file recreates them under the same names.';
  static override examples = [
    '<%= config.bin %> services spec hello',
    '<%= config.bin %> services spec hello -o hello.yaml && kubectl apply -f hello.yaml',
    '<%= config.bin %> services spec hello --json',
  ];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag, output: Flags.string({ char: 'o', description: 'write the YAML to this file instead of stdout' }) };

  async run() {
    const { args, flags } = await this.parse(ServicesSpec);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await call((await this.client()).call(serverlessRoutes.spec, { params: { projectID, name: args.name } }), { name: args.name });
    if (flags.output) {
      try {
        writeFileSync(flags.output, res.yaml);
      } catch (e) {
        throw new AbortError(`cannot write ${flags.output}: ${(e as Error).message}`, 'choose another path with -o');
      }
      this.note(`wrote ${flags.output}`);
    } else if (!this.jsonEnabled()) process.stdout.write(res.yaml.endsWith('\n') ? res.yaml : `${res.yaml}\n`);
    if (res.note) this.note(`# ${res.note}`);
    return res;
  }
}
