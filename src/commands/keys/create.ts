import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { authRoutes } from '../../api/auth.js';

export default class KeysCreate extends BaseCommand {
  static override summary = 'Create a personal API key; the secret is printed once';
  static override description = 'The key acts as you on every route. Use it with `platform login --api-key` or PLATFORM_TOKEN.';
  static override examples = ['<%= config.bin %> keys create laptop', '<%= config.bin %> keys create ci --expires-in-days 30 --json'];
  static override args = { name: Args.string({ required: true, description: 'display name of the key' }) };
  static override flags = {
    'expires-in-days': Flags.integer({ description: 'days until the key expires (0 or absent: never; at most 3650)', min: 0, max: 3650 }),
  };

  async run() {
    const { args, flags } = await this.parse(KeysCreate);
    const res = await (await this.client()).call(authRoutes.createKey, {
      body: { display_name: args.name, ...(flags['expires-in-days'] !== undefined ? { expires_in_days: flags['expires-in-days'] } : {}) },
    });
    this.print(res.secret);
    this.note(`key ${res.key.key_id}: ${res.note}`);
    return res;
  }
}
