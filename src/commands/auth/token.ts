import { BaseCommand } from '../../cli/base-command.js';
import { authRoutes } from '../../api/auth.js';
import { getContext } from '../../client/contexts.js';
import { AbortError } from '../../client/errors.js';
import { renewShortLivedSession } from '../../client/session-token.js';

export default class AuthToken extends BaseCommand {
  static override summary = "Print the current sign-in's access token, for scripts (curl, CI steps)";
  static override description =
    'Prints only the token on stdout, like `gh auth token` or `gcloud auth print-access-token`: a session token (from `platform login`) is refreshed first when it has less than five minutes left, an API key (or the key the CLI keeps on the local context) is printed as is, and PLATFORM_TOKEN wins when set. The token acts as you: keep it out of logs. With --json: {token, expires_at} (expires_at null for a key without expiry).';
  static override examples = [
    '<%= config.bin %> auth token',
    'curl -H "Authorization: Bearer $(<%= config.bin %> auth token)" http://127.0.0.1:7070/v1/auth/me',
    '<%= config.bin %> auth token --json --context prod',
  ];

  async run() {
    const { flags } = await this.parse(AuthToken);
    const context = getContext(flags.context);
    await renewShortLivedSession(context);
    const conn = await this.connect();
    if (conn.credentialSource === 'none') throw new AbortError(`not signed in to ${context.name}`, 'sign in with `platform login` (or set PLATFORM_TOKEN)');
    // Proves the token works before a script relies on it; a refused session is refreshed here once.
    const me = await conn.client.call(authRoutes.me);
    const token = conn.client.bearer!;
    const result = { token, expires_at: me.expires_at ? new Date(me.expires_at * 1000).toISOString() : null };
    if (!this.jsonEnabled()) process.stdout.write(`${token}\n`);
    return result;
  }
}
