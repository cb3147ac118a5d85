/**
 * CLI start (issue 26): a command that makes one request to a running daemon, end to end, against
 * `node -e 0` plus the same request made by a bare node script, all interleaved in one run so the
 * machine's load falls on each alike. The goal: the command's time beyond that request at most
 * 1.5x `node -e 0`, and its peak RSS under 60 MiB.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_ADMIN as ADMIN, median, ms, startDaemonProcess, stopDaemonProcess, type Row } from './lib.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'run.js');

function runOnce(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t = performance.now();
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { env }, (e) => (e ? reject(e) : resolve(performance.now() - t))),
  );
}

/** Peak RSS in MiB of one run, read by the process itself at exit (getrusage's ru_maxrss). */
async function peakRssMiB(args: string[], env: NodeJS.ProcessEnv, dir: string): Promise<number> {
  const probe = join(dir, 'rss-probe.cjs');
  const out = join(dir, 'rss.txt');
  writeFileSync(probe, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, String(process.resourceUsage().maxRSS)));\n`);
  await runOnce(['--require', probe, ...args], env);
  return Number(readFileSync(out, 'utf8')) / 1024;
}

export async function cliStartBench(opts: { quick?: boolean } = {}): Promise<Row[]> {
  const rounds = opts.quick ? 7 : 21;
  const home = mkdtempSync(join(tmpdir(), 'platform-bench-cli-'));
  const daemon = await startDaemonProcess(home);
  try {
    const env = { ...process.env, PLATFORM_HOME: home, PLATFORM_NO_KEYCHAIN: '1' };
    await new Promise<void>((resolve, reject) => {
      const child = execFile(process.execPath, [BIN, 'login', '--email', ADMIN.email, '--password-stdin'], { env }, (e) => (e ? reject(e) : resolve()));
      child.stdin!.end(ADMIN.password);
    });
    const token = (JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8')) as Record<string, { token: string }>).local!.token;
    // The request itself, made by node with nothing else loaded: what no CLI can go under.
    const request = join(home, 'one-request.mjs');
    writeFileSync(
      request,
      `import http from 'node:http';\n` +
        `await new Promise((ok, fail) => http.get(${JSON.stringify(`${daemon.url}/v1/auth/me`)}, { headers: { authorization: ${JSON.stringify(`Bearer ${token}`)} } }, (r) => { r.resume(); r.on('end', ok); }).on('error', fail));\n`,
    );
    const commands: Array<[string, string[]]> = [
      ['platform whoami --json', ['whoami', '--json']],
      ['platform agents list --json', ['agents', 'list', '--json']],
    ];
    for (const [, args] of commands) await runOnce([BIN, ...args], env);
    const times = { node: [] as number[], request: [] as number[], ...Object.fromEntries(commands.map(([name]) => [name, [] as number[]])) };
    for (let i = 0; i < rounds; i++) {
      times.node.push(await runOnce(['-e', '0'], env));
      times.request.push(await runOnce([request], env));
      for (const [name, args] of commands) (times as Record<string, number[]>)[name]!.push(await runOnce([BIN, ...args], env));
    }
    const node = median(times.node);
    const requestCost = Math.max(0, median(times.request) - node);
    const rows: Row[] = [];
    for (const [name, args] of commands) {
      const total = median((times as Record<string, number[]>)[name]!);
      const beyond = total - requestCost;
      rows.push({
        bench: 'cli',
        metric: `${name}: start beyond its one request (median of ${rounds})`,
        value: `${ms(beyond)} (${ms(total)} end to end)`,
        figure: beyond,
        baseline: `node -e 0 ${ms(node)}; the request itself ${ms(requestCost)}`,
        baselineFigure: node,
        goal: { max: 1.5, of: 'ratio' },
      });
      const rss = await peakRssMiB([BIN, ...args], env, home);
      const nodeRss = await peakRssMiB(['-e', '0'], env, home);
      rows.push({ bench: 'cli', metric: `${name}: peak RSS`, figure: rss, unit: 'MiB', baseline: `node -e 0 ${nodeRss.toFixed(1)} MiB`, baselineFigure: nodeRss, goal: { max: 60, strict: true, unit: 'MiB' } });
    }
    return rows;
  } finally {
    await stopDaemonProcess(daemon.pid);
    rmSync(home, { recursive: true, force: true });
  }
}
