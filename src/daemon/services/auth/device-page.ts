import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { DeviceDecisionForm, authRoutes } from '../../../api/auth.js';
import type { AreaContext } from '../../area.js';
import { ApiError, badRequest } from '../../http/errors.js';
import { readBody } from '../../http/body.js';
import type { RequestContext } from '../../http/router.js';
import { parseInput } from '../../http/validate.js';
import { decideDeviceSignIn, normalizeUserCode, pendingCode, verificationUri } from './device-flow.js';
import type { SignIn } from './service.js';

/**
 * The approval page of device sign-in (RFC 8628 §3.3). The person signs in on the page itself
 * with e-mail and password: the platform has no browser sessions, and adding cookie sessions
 * for one page would add a credential to steal. The form is protected against cross-site
 * posting by a double-submit token (a SameSite=Strict, HttpOnly cookie that must match a hidden
 * field), the page cannot be framed, and no code or token ever travels in a URL the page makes.
 */

const CSRF_COOKIE = 'platform_device_csrf';
const FORM_LIMIT = authRoutes.deviceDecide.bodyLimit;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · platform</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
#user_code{font-family:monospace;font-size:1.4rem;letter-spacing:.15rem;text-transform:uppercase}
.buttons{display:flex;gap:.6rem;margin-top:1.2rem}button{flex:1;padding:.6rem;font-size:1rem}
.note{color:#555;font-size:.9rem}.error{color:#a00}</style></head>
<body><h1>${escape(title)}</h1>${body}</body></html>`;
}

function send(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Cache-Control': 'no-store',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(html);
}

function form(userCode: string, csrf: string, problem?: string): string {
  return page(
    'Sign in a device',
    `<p>Approve only a code that your own terminal shows you. Approving signs that terminal in as you.</p>
${problem ? `<p class="error" role="alert">${escape(problem)}</p>` : ''}
<form method="post" action="/device" autocomplete="on">
<input type="hidden" name="csrf" value="${escape(csrf)}">
<label for="user_code">Code</label><input id="user_code" name="user_code" value="${escape(userCode)}" placeholder="XXXX-XXXX" required autocomplete="off" spellcheck="false">
<label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password">
<div class="buttons"><button id="approve" name="action" value="approve" type="submit">Approve</button><button id="deny" name="action" value="deny" type="submit">Deny</button></div>
</form>
<p class="note">The code expires a few minutes after your terminal asked for it.</p>`,
  );
}

/** The cookie the form's hidden field must match; Secure whenever people reach the server over https. */
function csrfCookie(ctx: AreaContext, c: RequestContext, value: string): string {
  const secure = Boolean((c.req.socket as { encrypted?: boolean }).encrypted) || verificationUri(ctx).startsWith('https:');
  return `${CSRF_COOKIE}=${value}; Path=/device; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

const sameToken = (a: string | undefined, b: string) => Boolean(a) && Buffer.byteLength(a!) === Buffer.byteLength(b) && timingSafeEqual(Buffer.from(a!), Buffer.from(b));

/** GET /device: the form, with the code from verification_uri_complete filled in. */
export function showDevicePage(ctx: AreaContext, c: RequestContext): void {
  const url = new URL(c.req.url ?? '/device', 'http://x');
  const typed = url.searchParams.get('user_code') ?? '';
  const prefill = typed.length <= 32 ? typed.toUpperCase() : '';
  const csrf = randomBytes(24).toString('base64url');
  send(c.res, 200, form(prefill, csrf), { 'Set-Cookie': csrfCookie(ctx, c, csrf) });
}

/** POST /device: checks the form's origin token, signs the person in, records the decision. */
export async function decideOnDevicePage(ctx: AreaContext, signIn: SignIn, c: RequestContext): Promise<void> {
  const type = String(c.req.headers['content-type'] ?? '');
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) throw badRequest('the approval form is posted as application/x-www-form-urlencoded');
  const fields = new URLSearchParams((await readBody(c.req, FORM_LIMIT)).toString('utf8'));
  const body = parseInput(DeviceDecisionForm, Object.fromEntries(fields), 'body');
  const expected = cookieValue(c.req.headers.cookie, CSRF_COOKIE);
  const retry = (status: number, problem: string) => {
    const csrf = randomBytes(24).toString('base64url');
    send(c.res, status, form(body.user_code.toUpperCase(), csrf, problem), { 'Set-Cookie': csrfCookie(ctx, c, csrf) });
  };
  if (!sameToken(expected, body.csrf)) return retry(403, 'This form expired or came from another site. Check the code and sign in again.');
  let user;
  try {
    user = await signIn.authenticate({ email: body.email, password: body.password }, c.ip, c.requestId);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 401 || e.status === 429)) {
      return retry(e.status, e.status === 401 ? 'Invalid e-mail or password.' : 'Too many sign-in attempts. Wait a few minutes and try again.');
    }
    throw e;
  }
  const pending = pendingCode(ctx, body.user_code);
  const approve = body.action === 'approve';
  if (!pending || !decideDeviceSignIn(ctx, pending.id, user, approve, c.requestId)) {
    return retry(400, `The code ${normalizeUserCode(body.user_code) ? 'is unknown, already used or expired' : 'is missing'}. Check your terminal for the current one.`);
  }
  send(
    c.res,
    200,
    page(
      approve ? 'Device approved' : 'Device denied',
      approve
        ? `<p id="result">Signed in as ${escape(user.email)}. You can close this page and go back to your terminal.</p>`
        : '<p id="result">The sign-in was denied; the terminal that asked will be told. You can close this page.</p>',
    ),
  );
}
