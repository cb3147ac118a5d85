import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { tmuxTerminal } from '../helpers/tmux.js';
import { SERVER_PY } from '../serverless/data-helpers.js';

/**
 * The details of the data kinds in a real terminal against the daemon the CLI spawns (a
 * subscription's backlog, an index's live points, a cache's memory, the daemon's state directory),
 * and rolling a service back from the dashboard, checked through the API. docs/decisions/status.md.
 */
const sb = cliSandbox();
const work = mkdtempSync(join(tmpdir(), 'platform-status-details-'));
const term = tmuxTerminal('platform-status-details');
const { keys, until } = term;

async function ok(args: string[]) {
  const r = await sb.run(args);
  expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

beforeAll(async () => {
  const web = join(work, 'web');
  mkdirSync(web);
  writeFileSync(join(web, 'main.py'), SERVER_PY);
  const points = join(work, 'points.ndjson');
  writeFileSync(points, [1, 2, 3].map((i) => JSON.stringify({ id: i, vector: [i, 1], payload: { n: i } })).join('\n') + '\n');
  // The first command starts the daemon; the rest run side by side.
  await ok(['topics', 'create', 'orders', '--wait']);
  await Promise.all([
    (async () => {
      await ok(['subscriptions', 'create', 'orders', 'workers']);
      await ok(['publish', 'orders', '--text', 'one']);
      await ok(['publish', 'orders', '--text', 'two']);
    })(),
    (async () => {
      await ok(['indexes', 'create', 'docs', '--dimensions', '2']);
      // An index starts pending (data operations answer 409 until it is ready): wait for ready.
      const end = Date.now() + 30_000;
      while (!(await sb.run(['indexes', 'get', 'docs', '--json'])).json?.index?.ready) if (Date.now() > end) throw new Error('index docs never became ready');
      await ok(['indexes', 'upsert', 'docs', '--file', points]);
    })(),
    ok(['cache', 'create', 'sessions', '--policy', 'allkeys-lru', '--wait']),
    (async () => {
      // Two ready revisions, so there is one to roll back to.
      await ok(['services', 'deploy', web, '--name', 'web', '--wait']);
      await ok(['services', 'update', 'web', '--env', 'MSG=two', '--wait']);
    })(),
  ]);
  term.start(['status', '--interval', '1'], { ...sb.env, NO_COLOR: '' }, { columns: 120, rows: 36 });
  await until(/ 2 services +1\b[\s\S]* 8 caches +1\b/, 'the first frame with the data');
}, 180_000);

afterAll(async () => {
  term.close();
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('status details (tmux)', { timeout: 90_000 }, () => {
  it("opens a subscription's, an index's, a cache's and the daemon's details", async () => {
    keys('6');
    await until('topics/subs (2)', 'the topics pane');
    keys('j');
    await until(/> orders\/workers +ready +backlog 2 /, 'the subscription selected');
    keys('Enter');
    let screen = await until(/backlog 2 · unacked 0 · oldest unacked \d+s/, "the subscription's details with its backlog");
    expect(screen).toContain('details: topics/subs orders/workers');
    expect(screen).toContain('subscription workers of topic orders: ready');
    expect(screen).toContain('delivery pull · type shared');
    expect(screen).toContain('ack deadline 30s');
    expect(screen).toContain('dead letter none');
    keys('Escape');
    await until('topics/subs (2)', 'back from the details');

    keys('7');
    await until(/> docs +ready/, 'the index selected');
    keys('Enter');
    screen = await until(/live points 3 /, "the index's live point count");
    expect(screen).toContain('index docs: ready · status green');
    expect(screen).toContain('dimensions 2 · distance cosine');
    expect(screen).toContain('payload indexes: none');
    // Wait for the list before the next key: ESC and a key in one read would be alt+key.
    keys('Escape');
    await until('indexes (1)', 'back from the details');

    keys('8');
    await until(/> sessions +ready/, 'the cache selected');
    keys('Enter');
    screen = await until(/memory \S+ of 192\.0MiB/, "the cache's memory");
    expect(screen).toContain('size class small');
    expect(screen).toContain('eviction allkeys-lru');
    expect(screen).toMatch(/address 127\.0\.0\.1:\d+/);
    expect(screen).toContain('TLS off');
    keys('Escape');
    await until('caches (1)', 'back from the details');

    keys('9');
    await until('daemon/sandbox (4)', 'the daemon pane');
    keys('Enter');
    screen = await until('state directory', "the daemon's details");
    expect(screen).toContain(`state directory ${sb.home}`);
    expect(screen).toMatch(/isolation \S+/);
    keys('Escape');
    await until('daemon/sandbox (4)', 'back from the details');
  });

  it('rolls a service back with b and y: the traffic goes back to the previous revision', async () => {
    keys('2');
    await until(/> web +ready +web-00002 /, 'the service selected');
    keys('b');
    await until('roll service web back to its previous ready revision? [y/N]', 'the confirmation line');
    keys('y');
    await until('web: all requests go to web-00001', 'the rollback result');
    const got = await sb.run(['services', 'get', 'web', '--json']);
    expect(got.json.traffic).toEqual([{ revision_name: 'web-00001', percent: 100 }]);
    const revisions = await sb.run(['services', 'revisions', 'web', '--json']);
    const percent = Object.fromEntries((revisions.json.revisions as Array<{ name: string; traffic_percent: number }>).map((r) => [r.name, r.traffic_percent]));
    expect(percent).toEqual({ 'web-00002': 0, 'web-00001': 100 });
    keys('q');
    await until(/^exited 0\nprompt\$/m, 'the process to exit');
  });
});
