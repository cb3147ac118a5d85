import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** Debian's chromium (the embed widget test drives the same binary with --dump-dom). */
export const CHROMIUM = '/usr/bin/chromium';

interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

/**
 * Real headless chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
 * NUL-separated JSON on fds 3 and 4, as puppeteer's pipe transport), so a test can fill and
 * submit forms without a browser-automation package.
 */
export class Chromium {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Set<(m: CdpMessage) => void>();
  private buffer = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly input: Writable,
    output: Readable,
  ) {
    output.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      let at: number;
      while ((at = this.buffer.indexOf('\0')) >= 0) {
        const message = JSON.parse(this.buffer.slice(0, at)) as CdpMessage;
        this.buffer = this.buffer.slice(at + 1);
        if (message.id !== undefined) {
          const p = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) p?.reject(new Error(message.error.message));
          else p?.resolve(message.result ?? {});
        } else for (const l of this.listeners) l(message);
      }
    });
  }

  static launch(userDataDir: string): Chromium {
    const child = spawn(
      CHROMIUM,
      ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--remote-debugging-pipe', `--user-data-dir=${userDataDir}`, 'about:blank'],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
    );
    return new Chromium(child, child.stdio[3] as Writable, child.stdio[4] as Readable);
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.input.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
  }

  /** Resolves with the first event of this name (for this page) after the call. */
  once(method: string, sessionId: string, timeoutMs = 20_000): Promise<CdpMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(l);
        reject(new Error(`no ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      const l = (m: CdpMessage) => {
        if (m.method !== method || m.sessionId !== sessionId) return;
        clearTimeout(timer);
        this.listeners.delete(l);
        resolve(m);
      };
      this.listeners.add(l);
    });
  }

  async newPage(): Promise<Page> {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    await this.send('Page.enable', {}, sessionId as string);
    return new Page(this, sessionId as string);
  }

  async close(): Promise<void> {
    const gone = new Promise<void>((r) => (this.child.exitCode !== null ? r() : this.child.once('exit', () => r())));
    await this.send('Browser.close').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  }
}

export class Page {
  constructor(
    private readonly browser: Chromium,
    private readonly sessionId: string,
  ) {}

  /** Navigates and waits for the page's load event. */
  async goto(url: string): Promise<void> {
    const loaded = this.browser.once('Page.loadEventFired', this.sessionId);
    await this.browser.send('Page.navigate', { url }, this.sessionId);
    await loaded;
  }

  /** Evaluates an expression in the page and returns its JSON value. */
  async evaluate<T = unknown>(expression: string): Promise<T> {
    const r = (await this.browser.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, this.sessionId)) as {
      result: { value?: T };
      exceptionDetails?: { text: string };
    };
    if (r.exceptionDetails) throw new Error(`page threw: ${r.exceptionDetails.text}`);
    return r.result.value as T;
  }

  /** Runs a script that submits a form (a click), and waits for the page it leads to. */
  async submit(expression: string): Promise<void> {
    const loaded = this.browser.once('Page.loadEventFired', this.sessionId);
    await this.evaluate(expression);
    await loaded;
  }

  text(): Promise<string> {
    return this.evaluate<string>('document.body.innerText');
  }
}
