import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceFields, serviceFlags, waitFlags, waitWithProgress } from '../../cli/services.js';
import { serverlessRoutes, type ServiceView } from '../../api/serverless.js';
import { ApiCallError } from '../../client/errors.js';
import { nameFromDir } from '../../client/deploy.js';
import { readManifest } from '../../client/pack.js';
import { SOURCE_RUNTIMES, call, createBody, detectServer, patchBody, uploadSource } from '../../client/services.js';

const { image: _image, ...templateFlags } = serviceFlags({ update: true });

export default class ServicesDeploy extends BaseCommand {
  static override summary = 'Run a source folder as a service, without a container engine: upload it, then create the service or roll out a new revision';
  static override description =
    'The folder is its own web server listening on $PORT: main.py (python, requirements.txt installed), package.json\'s start script or index.js (nodejs), a Go module (built, then run) or app.rb (ruby). It is packed honouring .gitignore and .platformignore, uploaded, and stored under a content-addressed image reference (source.platform.local/...), which becomes the service\'s image. An existing service gets a new revision; other flags change only what they name.';
  static override examples = [
    '<%= config.bin %> services deploy ./web --wait',
    '<%= config.bin %> services deploy . --name api --publish --env MODE=prod --wait',
    '<%= config.bin %> services deploy ./svc --runtime python --min-scale 1 --json',
  ];
  static override args = { dir: Args.directory({ description: 'the folder to run (default: the current one)', default: '.', exists: true }) };
  static override flags = {
    project: projectFlag,
    name: Flags.string({ description: 'service name (default: platform.json\'s name, else the folder\'s name)' }),
    runtime: Flags.string({ description: 'insist on this runtime (default: told by the folder\'s files)', options: SOURCE_RUNTIMES }),
    ...templateFlags,
    ...waitFlags,
  };

  async run() {
    const { args, flags } = await this.parse(ServicesDeploy);
    const projectID = this.projectRef(flags.project, flags.context);
    const name = flags.name ?? readManifest(args.dir).name ?? nameFromDir(args.dir);
    const detected = detectServer(args.dir, flags.runtime ?? readManifest(args.dir).runtime);
    this.note(`${args.dir}: ${detected.runtime} (${detected.by})`);
    const client = await this.client();
    const ref = { projectID, name };
    const params = { projectID, name };
    const upload = await uploadSource(client, projectID, args.dir);
    for (const s of upload.skipped) this.note(`skipped ${s}`);
    this.note(`uploaded ${upload.files} files (${(upload.bytes / 1024).toFixed(1)} KiB) as ${upload.image}`);
    let current: ServiceView | undefined;
    try {
      current = await client.call(serverlessRoutes.get, { params });
    } catch (e) {
      if (!(e instanceof ApiCallError && e.status === 404 && !/project/i.test(e.message))) await call(Promise.reject(e), ref);
    }
    let service: ServiceView;
    if (!current) {
      service = await call(client.call(serverlessRoutes.create, { params: { projectID }, body: createBody(name, { ...flags, image: upload.image }) }), ref);
      this.note(`created ${name} (${service.latest_created_revision})`);
    } else {
      const path = await client.pathFor(serverlessRoutes.patch, params);
      const body = patchBody(current, { ...flags, image: upload.image });
      service = await call(client.request('PATCH', path, { body, headers: { 'If-Match': String(current.generation) } }).then((r) => r.json() as Promise<ServiceView>), ref);
      this.note(service.latest_created_revision === current.latest_created_revision ? `${name}: the same sources and settings, no new revision` : `${name}: new revision ${service.latest_created_revision}`);
    }
    if (flags.wait) service = (await waitWithProgress(client, ref, { json: this.jsonEnabled(), timeout: flags['wait-timeout'] })).service;
    this.fields(serviceFields(service));
    if (!flags.wait) this.note(`\nfollow it with \`${this.config.bin} services get ${name}\` (or deploy with --wait)`);
    return { service, image: upload.image, runtime: detected.runtime, files: upload.files };
  }
}
