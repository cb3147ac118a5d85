import { ApiError, badRequest } from './errors.js';

/**
 * The request target as a URL, or an error when it is not one. Node hands the raw target over
 * unchecked: origin form (`/path?q`) is read as a path on this host, so `//[/x` or `//evil/x`
 * stays a path instead of naming another host; absolute form (`http://host/path`, RFC 9112 §3.2.2)
 * keeps only its path and query; anything else (`*`, `http://[::1/x`, a port over 65535) is 400.
 *
 * Path segments `.` and `..`, also percent-encoded, are 404: the URL parser would resolve them
 * (`agents/%2e%2e/secret-maps` becomes the project's list), and no resource is named by them.
 */
export function requestTarget(raw: string | undefined): URL {
  const target = raw ?? '/';
  let path: string | undefined;
  if (target.startsWith('/')) path = target;
  else {
    const m = /^https?:\/\/[^/?#]*(.*)$/is.exec(target);
    if (m) path = m[1] || '/';
  }
  if (path === undefined || !path.startsWith('/') && !path.startsWith('?')) throw malformed(target);
  const pathOnly = path.split(/[?#]/, 1)[0]!;
  // The URL parser reads a backslash as a slash in http URLs, so both separate segments here.
  for (const seg of pathOnly.split(/[/\\]/)) {
    const decoded = seg.length <= 6 ? seg.replace(/%2e/gi, '.') : '';
    if (decoded === '.' || decoded === '..') throw new ApiError(404, `no route for path segment ${seg}: "." and ".." do not name resources`);
  }
  try {
    if (target !== path) new URL(target); // an absolute target must be a valid URL as a whole (port, host)
    return new URL(`http://localhost${path.startsWith('?') ? `/${path}` : path}`);
  } catch {
    throw malformed(target);
  }
}

const malformed = (target: string) => badRequest(`malformed request target: ${printable(target)}`);

/** A target echoed back in an error: bounded and without control characters. */
const printable = (s: string) => JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
