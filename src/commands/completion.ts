import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { completionScript, SHELLS } from '../cli/completion/scripts.js';

export default class Completion extends BaseCommand {
  static override summary = 'Print the shell completion script for bash, zsh or fish';
  static override description =
    'The script completes commands, flags, flag values and the names of your agents, topics, subscriptions, indexes, MCP servers, services, caches, triggers, projects and contexts. Names come from the running daemon (or the context\'s server) and are kept 20 s; completion never starts the daemon and gives up after about a second.';
  static override examples = [
    "echo 'source <(<%= config.bin %> completion bash)' >> ~/.bashrc",
    "echo 'source <(<%= config.bin %> completion zsh)' >> ~/.zshrc   # after compinit",
    '<%= config.bin %> completion fish > ~/.config/fish/completions/<%= config.bin %>.fish',
  ];
  static override args = { shell: Args.string({ description: 'the shell', options: [...SHELLS], required: true }) };

  async run() {
    const { args } = await this.parse(Completion);
    const script = completionScript(args.shell as (typeof SHELLS)[number], this.config.bin);
    if (!this.jsonEnabled()) process.stdout.write(script);
    return { shell: args.shell, script };
  }
}
