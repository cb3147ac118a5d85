import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, waitFlags, waitWithProgress } from '../../cli/mcp.js';
import { FOLDER_SETTINGS, deleteTool, explain, planFolder, publishTool, readFolder, type PublishResult, type ServerRef } from '../../client/mcp.js';
import type { ApiClient } from '../../client/api-client.js';
import { AbortError } from '../../client/errors.js';
import { mcpRoutes } from '../../api/mcp.js';

export default class McpPublish extends BaseCommand {
  static override summary = 'Publish every tool module (*.py) of a folder; --wait waits for the version holding all of them';
  static override description = [
    'Each *.py directly in DIR is a tool named after its file (files starting with _ are skipped). Optional per-tool settings live in DIR/' + FOLDER_SETTINGS + ': {"tools": {"<name>": {"description": "...", "schema": {...}, "credential_keys": ["..."]}}}.',
    'Tools whose source and settings equal what the server runs are not sent again (--force sends them all), so publishing an unchanged folder makes no version. --prune also removes tools the folder no longer has.',
    'The API publishes one tool per request and every request makes a version, so a folder with N changed tools makes N versions in a row; only the last holds the whole folder, and --wait waits for that one. The versions in between are real (listed, and rollback targets).',
  ].join('\n\n');
  static override examples = [
    '<%= config.bin %> mcp publish weather ./weather --wait',
    '<%= config.bin %> mcp publish weather . --prune --wait --verbose',
    '<%= config.bin %> mcp publish weather ./weather --force --json',
  ];
  static override args = { server: serverArg, dir: Args.directory({ description: 'folder holding the tool modules', required: true, exists: true }) };
  static override flags = {
    project: projectFlag,
    force: Flags.boolean({ description: 'publish every tool, even those the server already runs unchanged' }),
    prune: Flags.boolean({ description: 'also remove tools the server has but the folder does not' }),
    ...waitFlags,
  };

  async run() {
    const { args, flags } = await this.parse(McpPublish);
    const projectID = this.projectRef(flags.project, flags.context);
    const { tools, skipped } = readFolder(args.dir);
    for (const s of skipped) this.note(`skipped ${s} (starts with _)`);
    const client = await this.client();
    const ref = { projectID, server: args.server };
    const plan = await planFolder(client, ref, tools, !!flags.force);
    if (plan.unchanged.length) this.note(`unchanged: ${plan.unchanged.join(', ')}`);
    if (plan.extra.length && !flags.prune) this.note(`on the server but not in ${args.dir}: ${plan.extra.join(', ')} (kept; --prune removes them)`);
    const published: PublishResult[] = [];
    for (const t of plan.publish) {
      const res = await publishTool(client, ref, t.name, t.body);
      published.push(res);
      this.note(`published ${t.name}${res.version ? `: version ${res.version}` : ''}`);
    }
    const removed: PublishResult[] = [];
    if (flags.prune) {
      for (const name of plan.extra) {
        const res = await deleteTool(client, ref, name);
        removed.push({ server: res.server, name: res.name, version: res.version, build_id: res.build_id, note: res.note });
        this.note(`removed ${name}${res.version ? `: version ${res.version}` : ''}`);
      }
    }
    const last = [...published, ...removed].at(-1);
    const result = { server: args.server, published, removed, unchanged: plan.unchanged, skipped, version: last?.version };
    if (!last) return this.nothingChanged(client, ref, args.dir, result, flags);
    const versions = [...published, ...removed].map((r) => r.version).filter((v): v is number => v !== undefined);
    const span = versions.length > 1 ? `versions ${versions[0]}-${versions.at(-1)} (the last holds the whole folder)` : versions.length ? `version ${versions[0]}` : 'a new version';
    this.print(`${args.server}: ${published.length} published${removed.length ? `, ${removed.length} removed` : ''} as ${span}`);
    if (!flags.wait) {
      this.note(`building; follow it with \`${this.config.bin} mcp get ${args.server}\` (or publish with --wait)`);
      return result;
    }
    const server = await waitWithProgress(client, ref, last.version, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout });
    this.print(`${server.name} is ready: version ${server.version} with ${server.tool_names.join(', ')}`);
    return { ...result, mcp_server: server };
  }

  /**
   * Nothing to send. That is only "done" when the server is ready: after a failed build (of the same
   * sources, e.g. an image build that broke) the user needs --force, and a build still running is
   * waited for like any other.
   */
  private async nothingChanged<T extends object>(client: ApiClient, ref: ServerRef, dir: string, result: T, flags: { wait: boolean; verbose?: boolean; timeout: number }) {
    const server = (await client.call(mcpRoutes.get, { params: { projectID: ref.projectID, name: ref.server } }).catch((e: unknown) => explain(e, { server: ref.server }))).mcp_server;
    if (server.state === 'failed') {
      throw new AbortError(`nothing changed in ${dir}, but the last build of ${ref.server} failed:\n${server.message ?? '(no message)'}`, 'fix the tools and publish again, or rebuild the same ones with --force');
    }
    if (server.state !== 'ready' && flags.wait) {
      const ready = await waitWithProgress(client, ref, undefined, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout });
      this.print(`nothing changed in ${dir}; ${ready.name} is ready: version ${ready.version} with ${ready.tool_names.join(', ')}`);
      return { ...result, mcp_server: ready };
    }
    this.print(server.state === 'ready' ? `nothing to publish: ${ref.server} already runs every tool of ${dir} unchanged` : `nothing changed in ${dir}; ${ref.server} is ${server.state}`);
    return { ...result, mcp_server: server };
  }
}
