import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { authRoutes } from '../api/auth.js';
import { CredentialStore, type StoredCredential } from '../client/credentials.js';
import { getContext, setSignedOut } from '../client/contexts.js';
import { clientFor, contextUrl } from '../client/session.js';
import { deviceLogin } from '../client/device-login.js';
import { sessionCredential } from '../client/refresh.js';
import { UsageError } from '../client/errors.js';
import { ask, askHidden, readStdin, requireTty } from '../cli/prompt.js';
import { signInWithSetupToken } from '../client/setup-login.js';

export default class Login extends BaseCommand {
  static override summary = 'Sign in to the current context';
  static override description =
    'With --web, signs in through the browser: the CLI shows a one-time code and the server\'s approval page, where you sign in and approve it (a device sign-in in the manner of RFC 8628; works over SSH and without a local browser). Otherwise prompts for e-mail and password (hidden), or reads the password from stdin with --password-stdin, or stores an API key read from stdin with --api-key-stdin. A key given on the command line with --api-key works but is warned about: other local users can read a command line. The credential goes to the OS keychain, or a 0600 file where no keychain answers.';
  static override examples = [
    '<%= config.bin %> login',
    '<%= config.bin %> login --web --context prod',
    'printf %s "$PASSWORD" | <%= config.bin %> login --email me@example.com --password-stdin',
    'printf %s "$PLATFORM_API_KEY" | <%= config.bin %> login --api-key-stdin',
    'printf %s "$PLATFORM_API_KEY" | <%= config.bin %> login --api-key-stdin --json',
    'printf "%s\\n%s\\n" "$SETUP_TOKEN" "$PASSWORD" | <%= config.bin %> login --setup-token --email admin@example.com',
  ];
  static override flags = {
    web: Flags.boolean({ description: 'sign in through the browser with a one-time code', exclusive: ['email', 'password-stdin', 'api-key-stdin', 'api-key'] }),
    browser: Flags.boolean({ description: 'with --web, open the approval page in a browser when one is available', default: true, allowNo: true }),
    email: Flags.string({ description: 'e-mail to sign in with' }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin', dependsOn: ['email'] }),
    'api-key-stdin': Flags.boolean({
      description: 'read an API key (svc_...) from stdin and store it instead of signing in',
      exclusive: ['email', 'password-stdin', 'api-key'],
    }),
    'api-key': Flags.string({
      description: 'store an API key given here (visible to other local users in the process list: prefer --api-key-stdin)',
      exclusive: ['email', 'password-stdin'],
    }),
    'setup-token': Flags.boolean({
      description: "create a new server's first admin with the setup token it printed (stdin: token, then password, one per line; asked hidden at a terminal)",
      exclusive: ['password-stdin', 'api-key-stdin', 'api-key'],
    }),
  };

  async run() {
    const { flags } = await this.parse(Login);
    const context = getContext(flags.context);
    const url = await contextUrl(context);
    const store = new CredentialStore();
    const save = async (cred: StoredCredential) => {
      const where = await store.set(context.name, cred);
      setSignedOut(context.name, false);
      return where;
    };
    if (flags.web) {
      const res = await deviceLogin(clientFor(context, url), {
        openBrowser: flags.browser,
        // On stderr even with --json: the person needs the code; stdout carries only the result.
        show: (code) =>
          process.stderr.write(
            `First copy your one-time code: ${code.user_code}\nThen open ${code.verification_uri} and approve it (or open ${code.verification_uri_complete}).\nThe code expires in ${Math.round(code.expires_in / 60) || 1} minutes. Waiting for approval...\n`,
          ),
      });
      const where = await save(sessionCredential(res));
      this.print(`signed in to ${context.name} as ${res.email} (stored in the ${where})`);
      if (res.must_change_password) this.note('you must change your password before anything else: run `platform passwd`');
      return { context: context.name, email: res.email, role: res.role, must_change_password: res.must_change_password, expires_at: res.expires_at, stored_in: where };
    }
    // On stderr even with --json: the warning is about how the command was run, not its result.
    if (flags['api-key']) process.stderr.write('warning: a key on the command line can be read by other local users (ps, /proc); use --api-key-stdin\n');
    const given = flags['api-key-stdin'] ? await readStdin() : flags['api-key'];
    if (given !== undefined) {
      const key = given.trim();
      if (!key.startsWith('svc_')) throw new UsageError('an API key starts with svc_');
      const me = await clientFor(context, url, key).call(authRoutes.me);
      const where = await save({ token: key, email: me.email, expiresAt: me.expires_at });
      this.print(`signed in to ${context.name} as ${me.email} with an API key (stored in the ${where})`);
      return { context: context.name, email: me.email, role: me.role, credential: 'api_key', stored_in: where };
    }
    if (flags['setup-token']) {
      const res = await signInWithSetupToken(clientFor(context, url), flags.email);
      const where = await save(sessionCredential(res));
      this.print(`first admin ${res.email} created on ${context.name} and signed in (stored in the ${where})`);
      return { context: context.name, email: res.email, role: res.role, setup: true, expires_at: res.expires_at, stored_in: where };
    }
    let email = flags.email;
    let password: string;
    if (flags['password-stdin']) {
      password = (await readStdin()).replace(/\r?\n$/, '');
    } else {
      requireTty('the password prompt', 'use `--email EMAIL --password-stdin` or `--api-key KEY` in scripts');
      email ??= (await ask('E-mail: ')).trim();
      password = await askHidden('Password: ');
    }
    if (!email) throw new UsageError('an e-mail is required');
    const res = await clientFor(context, url).call(authRoutes.login, { body: { email, password } });
    const where = await save(sessionCredential(res));
    this.print(`signed in to ${context.name} as ${res.email} (stored in the ${where})`);
    if (res.must_change_password) this.note('you must change your password before anything else: run `platform passwd`');
    return { context: context.name, email: res.email, role: res.role, must_change_password: res.must_change_password, expires_at: res.expires_at, stored_in: where };
  }
}
