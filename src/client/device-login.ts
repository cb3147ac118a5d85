import { openInBrowser } from './open-browser.js';
import { hostname } from 'node:os';
import type { z } from 'zod';
import { authRoutes, type DeviceCode, type LoginResponse } from '../api/auth.js';
import type { ApiClient } from './api-client.js';
import { AbortError, ApiCallError } from './errors.js';

export interface DeviceLoginOptions {
  /** Shown to the person (the CLI writes it on stderr): the code and where to approve it. */
  show(code: z.infer<typeof DeviceCode>): void;
  /** Try to open the approval page in a browser (best effort). */
  openBrowser: boolean;
}

/**
 * `platform login --web`: device sign-in in the manner of RFC 8628, as `gh auth login --web`
 * and `az login --use-device-code` do. The CLI asks for a code, shows it, opens the browser when
 * it can, and polls at the server's interval (longer after a slow_down) until the person
 * approves or denies the code on the server's page, or it expires.
 */
export async function deviceLogin(client: ApiClient, opts: DeviceLoginOptions): Promise<z.infer<typeof LoginResponse>> {
  const code = await client.call(authRoutes.deviceCode, { body: { client_name: `platform CLI on ${hostname()}`.slice(0, 80) } });
  opts.show(code);
  if (opts.openBrowser) void openInBrowser(code.verification_uri_complete);
  let interval = code.interval;
  // The server is the judge of expiry; this bound only stops a CLI whose server went silent.
  const giveUpAt = Date.now() + (code.expires_in + 30) * 1000;
  for (;;) {
    await new Promise((r) => setTimeout(r, interval * 1000));
    try {
      return await client.call(authRoutes.deviceToken, { body: { device_code: code.device_code } });
    } catch (e) {
      const rfc = e instanceof ApiCallError && e.status === 400 ? (e.body as { code?: string; interval?: number } | undefined) : undefined;
      if (rfc?.code === 'authorization_pending' && Date.now() < giveUpAt) continue;
      if (rfc?.code === 'slow_down') {
        interval = typeof rfc.interval === 'number' ? rfc.interval : interval + 5;
        continue;
      }
      if (rfc?.code === 'access_denied') throw new AbortError('the sign-in was denied on the approval page', 'run `platform login --web` again if that was a mistake');
      if (rfc?.code === 'expired_token' || rfc?.code === 'authorization_pending') {
        throw new AbortError(`the code ${code.user_code} expired before it was approved`, `run \`platform login --web\` again and approve the new code within ${Math.round(code.expires_in / 60) || 1} minutes`);
      }
      if (rfc?.code === 'invalid_grant') throw new AbortError('the server no longer knows this sign-in code', 'run `platform login --web` again');
      throw e;
    }
  }
}

