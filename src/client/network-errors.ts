import { AbortError } from './errors.js';

/** OpenSSL's codes for a certificate chain that does not end in a trusted authority. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
]);

/** Every error code along an error's cause chain (undici wraps the socket's error, Node may aggregate). */
function codes(e: unknown, seen = new Set<unknown>()): { code: string; message: string }[] {
  if (!e || typeof e !== 'object' || seen.has(e)) return [];
  seen.add(e);
  const err = e as Error & { code?: string; cause?: unknown; errors?: unknown[] };
  const own = typeof err.code === 'string' ? [{ code: err.code, message: err.message }] : [];
  return [...own, ...codes(err.cause, seen), ...(err.errors ?? []).flatMap((x) => codes(x, seen))];
}

/** Nothing listens at the address: the one failure a request can be sent again elsewhere after. */
export const connectionRefused = (e: unknown): boolean => codes(e).some((c) => c.code === 'ECONNREFUSED');

/**
 * A failure to reach the server, said as what to do about it: an untrusted or mismatched
 * certificate, a refused connection, an unknown host. Never a stack trace.
 */
export function unreachable(baseUrl: string, e: unknown): AbortError {
  const found = codes(e);
  const has = (pred: (c: string) => boolean) => found.find((f) => pred(f.code));
  const untrusted = has((c) => UNTRUSTED.has(c));
  if (untrusted) {
    return new AbortError(
      `the server's certificate is not trusted (${untrusted.message}): ${baseUrl} presents a certificate from an authority this machine does not know`,
      'pass --ca-cert FILE with the CA that signed it (`platform context add NAME URL --ca-cert FILE`), or ask the operator for a certificate from a public authority',
    );
  }
  const expired = has((c) => c === 'CERT_HAS_EXPIRED' || c === 'CERT_NOT_YET_VALID');
  if (expired) return new AbortError(`the server's certificate is not valid now (${expired.message})`, "ask the server's operator to renew it, or check this machine's clock");
  const name = has((c) => c === 'ERR_TLS_CERT_ALTNAME_INVALID');
  if (name) return new AbortError(`the server's certificate does not name this host (${name.message})`, 'use the host name the certificate was issued for in the context URL');
  if (has((c) => /WRONG_VERSION_NUMBER|EPROTO/.test(c))) {
    return new AbortError(`${baseUrl} does not speak TLS the way the URL says (${found[0]!.message})`, 'check http:// against https:// in the context URL');
  }
  if (has((c) => c === 'ECONNREFUSED')) {
    return new AbortError(`cannot reach ${baseUrl}: nothing is listening there (connection refused)`, 'check the URL and port (`platform context list`), or start the local daemon with `platform daemon start`');
  }
  if (has((c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN')) {
    return new AbortError(`cannot reach ${baseUrl}: the host name does not resolve`, 'check the host name in the context URL (`platform context list`)');
  }
  if (has((c) => c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'ETIMEDOUT' || c === 'EHOSTUNREACH' || c === 'ENETUNREACH')) {
    return new AbortError(`cannot reach ${baseUrl}: no answer (${found[0]!.code})`, 'check the network, a firewall or VPN between here and the server');
  }
  const detail = found[0]?.message ?? (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
  return new AbortError(`cannot reach ${baseUrl}: ${detail}`, 'check the context with `platform context list`, or start the local daemon with `platform daemon start`');
}
