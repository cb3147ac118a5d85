import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const cli = cliSandbox();
afterAll(() => cli.stop());

const STACK_FRAME = /\n\s+at \S/;

describe('the CLI says what the local daemon is doing', () => {
  let url = '';
  let pid = 0;

  it('a command that has to start the daemon says so on stderr, once', async () => {
    const first = await cli.run(['agents', 'list', '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json).toBeTruthy();
    expect(first.stderr).toContain('Starting the local daemon on a free port of 127.0.0.1…');
    const ready = /The local daemon is ready at (http:\/\/127\.0\.0\.1:\d+) \(state in .+; stop it with `platform daemon stop`\)/.exec(first.stderr);
    expect(ready, first.stderr).toBeTruthy();
    ({ url, pid } = (await cli.run(['daemon', 'status', '--json'])).json as { url: string; pid: number });
    expect(ready![1]).toBe(url);
    const second = await cli.run(['agents', 'list']);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).not.toContain('Starting the local daemon');
  });

  it('a busy port is named, with --port 0 as the way out, and no stack trace', async () => {
    const other = cliSandbox();
    const squatter: Server = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const port = (squatter.address() as { port: number }).port;
    try {
      const r = await other.run(['daemon', 'start', '--port', String(port)]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`Error: port ${port} on 127.0.0.1 is already in use by another program`);
      expect(r.stderr).toContain('pass `--port 0` to take a free port');
      expect(r.stderr).not.toMatch(STACK_FRAME);
      expect(r.stderr).not.toContain('EADDRINUSE');
      const json = await other.run(['daemon', 'start', '--port', String(port), '--json']);
      expect(json.exitCode).toBe(1);
      expect(json.json).toEqual({
        error: `port ${port} on 127.0.0.1 is already in use by another program, so the local daemon cannot listen there`,
        next: `pass \`--port 0\` to take a free port (or --port N, or set PLATFORM_PORT), or stop what listens on ${port}`,
      });
      // The way out works.
      const free = await other.run(['daemon', 'start', '--port', '0', '--json']);
      expect(free.exitCode, free.stderr).toBe(0);
    } finally {
      squatter.close();
      await other.stop();
    }
  });

  it('a daemon stopped with SIGSTOP makes commands fail after --timeout, not hang', async () => {
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const r = await cli.run(['agents', 'list', '--timeout', '2']);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`Error: the platform at ${url} did not answer within 2 s; is it stopped?`);
      expect(r.stderr).toContain('next: try `platform daemon status`, or raise --timeout');
      expect(Date.now() - started).toBeLessThan(15_000);
      // The same wait from the environment, and through the API client itself (an explicit URL skips the
      // local daemon's health probe, so the request's own deadline is what fires).
      const viaEnv = await cli.run(['agents', 'list', '--json'], { env: { PLATFORM_TIMEOUT: '2', PLATFORM_API_URL: url } });
      expect(viaEnv.exitCode).toBe(1);
      expect(viaEnv.json).toEqual({ error: `the platform at ${url} did not answer within 2 s; is it stopped?`, next: 'try `platform daemon status`, or raise --timeout' });
      // Neither a second daemon nor a misleading "not running": status names the stopped process.
      const status = await cli.run(['daemon', 'status']);
      expect(status.exitCode).toBe(1);
      expect(status.stderr).toContain(`the local daemon (pid ${pid}) at ${url} is running but does not answer`);
      expect(status.stderr).toContain(`kill -CONT ${pid}`);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const after = await cli.run(['agents', 'list', '--json']);
    expect(after.exitCode, after.stderr).toBe(0);
    expect((await cli.run(['daemon', 'status', '--json'])).json).toMatchObject({ pid, url });
  });
});
