import { Args, loadHelpClass } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { unknownCommandError } from '../cli/unknown-command.js';

/** `platform help X` as git and gh have it; the same text as `platform X --help`. */
export default class Help extends BaseCommand {
  static override summary = 'Show help for a command or topic (same as COMMAND --help)';
  static override examples = ['<%= config.bin %> help deploy', '<%= config.bin %> help agents list', '<%= config.bin %> help'];
  static override strict = false;
  static override args = { command: Args.string({ description: 'command or topic, words separated by spaces' }) };

  async run() {
    const { argv } = await this.parse(Help);
    const words = (argv as string[]).filter((w) => !w.startsWith('-'));
    const id = words.join(':');
    if (words.length && !this.config.findCommand(id) && !this.config.findTopic(id)) throw unknownCommandError(this.config, words);
    const HelpClass = await loadHelpClass(this.config);
    await new HelpClass(this.config, this.config.pjson.oclif.helpOptions ?? this.config.pjson.helpOptions).showHelp(words);
  }
}
