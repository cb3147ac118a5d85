import { BaseCommand } from '../cli/base-command.js';
import { authRoutes } from '../api/auth.js';

export default class Whoami extends BaseCommand {
  static override summary = 'Show who you are signed in as';
  static override examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --json'];

  async run() {
    const conn = await this.connect();
    const me = await conn.client.call(authRoutes.me);
    this.fields({
      email: me.email,
      role: me.role,
      context: conn.context.name,
      url: conn.url,
      expires: me.expires_at ? new Date(me.expires_at * 1000).toISOString() : 'never',
      project: me.project_slug,
      must_change_password: me.must_change_password || undefined,
    });
    return { ...me, context: conn.context.name, url: conn.url };
  }
}
