import type { z } from 'zod';
import type { RouteContract } from '../api/contract.js';
import { projectRoutes } from '../api/projects.js';
import { ApiCallError, AbortError } from './errors.js';
import { connectionRefused, unreachable } from './network-errors.js';
import { nodeFetch } from './node-fetch.js';
import { answerTimeoutFor, noAnswer } from './answer-timeout.js';
import { forPeople } from './api-hints.js';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CallInput {
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

/** Fills `{name}` and `{name...}` placeholders of a contract path. */
export function buildPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)(\.\.\.)?\}/g, (_m, name: string, rest?: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`missing path parameter ${name}`);
    return rest ? v.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(v);
  });
}

/** What to do next for the common failures, so every command gives the same advice. */
function nextStep(status: number, message: string): string | undefined {
  if (status === 401) return 'sign in with `platform login` (or set PLATFORM_TOKEN)';
  if (status === 403 && /password change required/.test(message)) return 'change your password with `platform passwd`';
  if (status === 429) return 'wait for the time in Retry-After and try again';
  return undefined;
}

export interface ApiClientOptions {
  /** PEM of the CA that signed the server's certificate (a context added with --ca-cert); trusted besides the system's. */
  ca?: string;
  /**
   * Called once when the server answers 401: returns a fresh token (a refreshed session) to
   * retry the request with, or undefined to let the 401 stand.
   */
  refresh?: () => Promise<string | undefined>;
  /**
   * The local daemon's address now, or undefined when none runs: a follow or a dashboard that
   * outlives a restart on another port (`daemon start --port 0`) finds it again.
   */
  relocate?: () => Promise<string | undefined>;
}

/** Typed client over the shared contract: the same zod route objects the daemon serves. */
export class ApiClient {
  private readonly projectIds = new Map<string, string>();

  constructor(
    private base: string,
    private token?: string,
    private readonly options: ApiClientOptions = {},
  ) {}

  /** The server's address (the local daemon's newest one, after a restart on another port). */
  get baseUrl(): string {
    return this.base;
  }

  /** The bearer token this client sends now (after any refresh), for `platform auth token`. */
  get bearer(): string | undefined {
    return this.token;
  }

  /** The extra CA this client trusts, for the few requests made outside it (gateway test). */
  get ca(): string | undefined {
    return this.options.ca;
  }

  /**
   * The request path of a contract. Routes whose `{projectID}` must be a UUID (the contract's
   * projectIdRule) get a slug or short name resolved to the project's id first, once per client.
   */
  async pathFor(contract: RouteContract, params: Record<string, string> = {}): Promise<string> {
    const ref = params.projectID;
    if (contract.projectIdRule && ref !== undefined) params = { ...params, projectID: await this.projectId(ref) };
    return buildPath(contract.path, params);
  }

  /** The id of a project named by id, slug or short (looked up once per client). */
  async projectId(ref: string): Promise<string> {
    if (UUID_RE.test(ref)) return ref;
    let id = this.projectIds.get(ref);
    if (!id) {
      id = (await this.call(projectRoutes.get, { params: { projectID: ref } })).id;
      this.projectIds.set(ref, id);
    }
    return id;
  }

  async call<C extends RouteContract>(contract: C, input: CallInput = {}): Promise<z.output<C['response']>> {
    const res = await this.request(contract.method, await this.pathFor(contract, input.params), input);
    return (await res.json()) as z.output<C['response']>;
  }

  /**
   * Sends a request and returns the raw response after turning a non-2xx into ApiCallError.
   * `waitSeconds` bounds the whole exchange on the client side; nothing else does, so an agent
   * allowed 900 s (spec 1 §8.5) is not cut short by a generic 300 s header or body timeout.
   */
  async request(
    method: string,
    path: string,
    input: Omit<CallInput, 'params'> & { headers?: Record<string, string>; rawBody?: RequestInit['body']; waitSeconds?: number } = {},
  ): Promise<Response> {
    let url = new URL(path, this.baseUrl);
    for (const [k, v] of Object.entries(input.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    let relocated = false;
    const headers: Record<string, string> = { accept: 'application/json', ...input.headers };
    let body: RequestInit["body"] | undefined = input.rawBody;
    if (input.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(input.body);
    }
    const send = async (): Promise<Response> => {
      if (this.token) headers.authorization = `Bearer ${this.token}`;
      // Until the response headers arrive: a stopped daemon accepts connections and never answers.
      const answerSeconds = input.waitSeconds === undefined ? answerTimeoutFor(body) : undefined;
      const silence = new AbortController();
      const timer = answerSeconds === undefined ? undefined : setTimeout(() => silence.abort(), answerSeconds * 1000);
      // A long wait bounds the whole exchange, body included; nothing else limits it.
      const signal = input.waitSeconds === undefined ? silence.signal : AbortSignal.timeout(input.waitSeconds * 1000);
      try {
        return await nodeFetch(url, { method, headers, body, signal }, this.options.ca);
      } catch (e) {
        if (silence.signal.aborted) throw noAnswer(this.baseUrl, answerSeconds!);
        // A refused connection reached no server, so asking the daemon's new address is safe
        // (a streamed body cannot be sent twice).
        if (!relocated && this.options.relocate && connectionRefused(e) && !(body instanceof ReadableStream)) {
          relocated = true;
          const moved = await this.options.relocate();
          if (moved && moved !== this.base) {
            this.base = moved;
            url = new URL(url.pathname + url.search, moved);
            return send();
          }
        }
        if ((e as Error).name === 'TimeoutError') {
          throw new AbortError(`no answer from ${this.baseUrl} within ${input.waitSeconds} s`, 'raise --timeout, or check the agent with `platform logs NAME`');
        }
        throw unreachable(this.baseUrl, e);
      } finally {
        clearTimeout(timer);
      }
    };
    let res = await send();
    // A streamed upload cannot be sent twice; its command refreshed before it started (session.ts).
    // Only a refused token (RFC 6750 invalid_token) is worth a refresh; a wrong current password is not.
    const refused = res.status === 401 && /invalid_token/.test(res.headers.get('www-authenticate') ?? '');
    if (refused && this.options.refresh && !(body instanceof ReadableStream)) {
      const fresh = await this.options.refresh();
      if (fresh && fresh !== this.token) {
        await res.body?.cancel();
        this.token = fresh;
        res = await send();
      }
    }
    if (res.ok) return res;
    const text = await res.text();
    let message = text || res.statusText;
    let requestId = res.headers.get('x-request-id') ?? undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
      const env = parsed as { error?: string; request_id?: string };
      if (env.error) message = env.error;
      requestId = env.request_id ?? requestId;
    } catch {
      // not an envelope: keep the text
    }
    throw new ApiCallError(res.status, forPeople(message), requestId, parsed, nextStep(res.status, message));
  }
}
