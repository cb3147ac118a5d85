import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, waitFlags, waitWithProgress } from '../../cli/mcp.js';
import { FOLDER_SETTINGS, explain, publishFolder, readFolder, type ServerRef } from '../../client/mcp.js';
import type { ApiClient } from '../../client/api-client.js';
import { AbortError } from '../../client/errors.js';
import { mcpRoutes } from '../../api/mcp.js';

export default class McpPublish extends BaseCommand {
  static override summary = 'Publish every tool module (*.py) of a folder as one new version';
  static override description = [
    'Each *.py directly in DIR is a tool named after its file (files starting with _ are skipped). Optional per-tool settings live in DIR/' + FOLDER_SETTINGS + ': {"tools": {"<name>": {"description": "...", "schema": {...}, "credential_keys": ["..."]}}}.',
    'The whole folder goes in one request and makes ONE version holding the folder plus the tools the server already has that the folder lacks (--prune removes those instead). A folder equal to what the server has makes no version; when the last build of that same folder failed, publishing it again builds it again.',
  ].join('\n\n');
  static override examples = [
    '<%= config.bin %> mcp publish weather ./weather --wait',
    '<%= config.bin %> mcp publish weather . --prune --wait --verbose',
    '<%= config.bin %> mcp publish weather ./weather --json',
  ];
  static override args = { server: serverArg, dir: Args.directory({ description: 'folder holding the tool modules', required: true, exists: true }) };
  static override flags = {
    project: projectFlag,
    prune: Flags.boolean({ description: 'also remove tools the server has but the folder does not (in the same version)' }),
    ...waitFlags,
  };

  async run() {
    const { args, flags } = await this.parse(McpPublish);
    const projectID = this.projectRef(flags.project, flags.context);
    const { tools, skipped } = readFolder(args.dir);
    for (const s of skipped) this.note(`skipped ${s} (starts with _)`);
    const client = await this.client();
    const ref = { projectID, server: args.server };
    const res = await publishFolder(client, ref, tools, !!flags.prune);
    const unchanged = res.names.filter((n) => !res.changed.includes(n));
    const kept = res.tool_names.filter((n) => !res.names.includes(n));
    if (unchanged.length && res.published) this.note(`unchanged: ${unchanged.join(', ')}`);
    if (kept.length) this.note(`on the server but not in ${args.dir}: ${kept.join(', ')} (kept; --prune removes them)`);
    const result = {
      server: args.server,
      published: res.changed,
      removed: res.removed,
      unchanged,
      kept,
      skipped,
      tool_names: res.tool_names,
      ...(res.published ? { version: res.version, build_id: res.build_id } : {}),
    };
    if (!res.published) return this.nothingChanged(client, ref, args.dir, result, flags);
    this.print(`${args.server}: ${res.changed.length} published${res.removed.length ? `, ${res.removed.length} removed` : ''} as version ${res.version} (${res.tool_names.join(', ')})`);
    if (!flags.wait) {
      this.note(`building; follow it with \`${this.config.bin} mcp get ${args.server}\` (or publish with --wait)`);
      return result;
    }
    const server = await waitWithProgress(client, ref, res.version, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout });
    this.print(`${server.name} is ready: version ${server.version} with ${server.tool_names.join(', ')}`);
    return { ...result, mcp_server: server };
  }

  /**
   * No version was made: the server already has this folder. A build of it still running is
   * waited for with --wait; a failed one cannot be "unchanged" (the daemon builds it again), but a
   * state read a moment later may still say so.
   */
  private async nothingChanged<T extends object>(client: ApiClient, ref: ServerRef, dir: string, result: T, flags: { wait: boolean; verbose?: boolean; timeout: number }) {
    const server = (await client.call(mcpRoutes.get, { params: { projectID: ref.projectID, name: ref.server } }).catch((e: unknown) => explain(e, { server: ref.server }))).mcp_server;
    if (server.state === 'failed') {
      throw new AbortError(`nothing changed in ${dir}, but the last build of ${ref.server} failed:\n${server.message ?? '(no message)'}`, 'fix the tools and publish again');
    }
    if (server.state !== 'ready' && flags.wait) {
      const ready = await waitWithProgress(client, ref, undefined, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout });
      this.print(`nothing changed in ${dir}; ${ready.name} is ready: version ${ready.version} with ${ready.tool_names.join(', ')}`);
      return { ...result, mcp_server: ready };
    }
    this.print(server.state === 'ready' ? `nothing to publish: ${ref.server} already runs every tool of ${dir} unchanged (version ${server.version})` : `nothing changed in ${dir}; ${ref.server} is ${server.state}`);
    return { ...result, mcp_server: server };
  }
}
