import { authRoutes, type LoginResponse } from '../api/auth.js';
import type { z } from 'zod';
import type { ApiClient } from './api-client.js';
import { UsageError } from './errors.js';
import { ask, askHidden, readStdin } from '../cli/prompt.js';

/**
 * `platform login --setup-token`: the first admin of a server (docs/decisions/server.md). At a
 * terminal the token and the password are asked hidden; in a script stdin carries two lines,
 * the token then the password, and --email names the admin. Neither ever goes on the command line.
 */
export async function signInWithSetupToken(client: ApiClient, email: string | undefined): Promise<z.infer<typeof LoginResponse>> {
  let token: string;
  let password: string;
  if (process.stdin.isTTY) {
    token = (await askHidden('Setup token (printed by the server at its first start): ')).trim();
    email ??= (await ask('E-mail of the first admin: ')).trim();
    password = await askHidden('Password (12+ characters, 3 of upper, lower, digits, symbols): ');
    if ((await askHidden('Repeat the password: ')) !== password) throw new UsageError('the two passwords differ');
  } else {
    const lines = (await readStdin()).split(/\r?\n/);
    token = (lines[0] ?? '').trim();
    password = lines[1] ?? '';
    if (!password) throw new UsageError('stdin must carry two lines: the setup token, then the password', 'printf "%s\\n%s\\n" "$TOKEN" "$PASSWORD" | platform login --setup-token --email you@example.com');
  }
  if (!token) throw new UsageError('a setup token is required');
  if (!email) throw new UsageError('an e-mail is required', 'give --email');
  return client.call(authRoutes.setup, { body: { token, email, password } });
}
