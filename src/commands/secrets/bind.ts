import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretMapRoutes } from '../../api/secrets.js';

export default class SecretsBind extends BaseCommand {
  static override summary = "Bind a secret to an agent's environment variable (tracks the newest version unless --version pins one)";
  static override examples = [
    '<%= config.bin %> secrets bind support-bot STRIPE_KEY stripe-key',
    '<%= config.bin %> secrets bind support-bot DB_URL db-url --version 3',
  ];
  static override args = {
    agent: Args.string({ required: true, description: 'agent name' }),
    env: Args.string({ required: true, description: 'environment variable name' }),
    secret: Args.string({ required: true, description: 'secret name' }),
  };
  static override flags = { project: projectFlag, version: Flags.integer({ description: 'pin this version (default: track the newest)', min: 1 }) };

  async run() {
    const { args, flags } = await this.parse(SecretsBind);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretMapRoutes.put, {
      params: { projectID, agent: args.agent, envName: args.env },
      body: { secret_name: args.secret, version: flags.version ?? null },
    });
    this.print(`bound ${res.binding.agent}/${res.binding.env_name} -> ${res.binding.secret_name}@${res.binding.pinned_to}`);
    this.note(res.note);
    return res;
  }
}
