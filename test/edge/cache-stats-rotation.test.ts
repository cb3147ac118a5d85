import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { base, createInstance, haveRedis, instanceRow, startCacheDaemon, waitState } from '../cache/helpers.js';

/**
 * Found by the API fuzzer (issue 16): stats read while a rotation's planned restart was under way
 * answered 503 (connection refused). Within its 3 s budget the read now waits for the restarted
 * server instead.
 */
describe.skipIf(!haveRedis)('cache stats during a credential rotation', () => {
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  beforeAll(async () => {
    // A budget that covers a restart on a loaded 2-core CI machine (the default 3 s does on a quiet one):
    // what is tested is that a read waits for the restarted server instead of failing at once.
    // Rarely, a start during rapid rotations never listens (docs/decisions/cache.md, known remaining);
    // the supervisor kills it at the start timeout and starts again, and a read outlasts one such retry.
    d = await startCacheDaemon({ statsBudgetMs: 10_000, startTimeoutMs: 5_000 });
    c = await cast(d);
  });
  afterAll(() => d?.close());

  it('stats read during the restart that applies a rotated password answer 200', async () => {
    await createInstance(d, c.admin.token, c.project.id, { name: 'rot' });
    await waitState(d, c.admin.token, c.project.id, 'rot');
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const rotation = d.api('POST', `${base(c.project.id)}/rot/rotate-credential`, { token: c.admin.token });
      for (let i = 0; i < 8; i++) statuses.push((await d.api('GET', `${base(c.project.id)}/rot/stats`, { token: c.member.token })).status);
      expect((await rotation).status).toBe(200);
      await waitState(d, c.admin.token, c.project.id, 'rot');
    }
    expect(statuses.every((s) => s === 200), statuses.join(',')).toBe(true);
  });

  it('rotations during a rotation\'s restart: stats keep answering 200 and the last password is the one in force', async () => {
    const statuses: number[] = [];
    let last = '';
    // The second rotation lands at different points of the first one's restart (before the stop,
    // during the start), where the server may come up with either password.
    for (const gap of [0, 30, 80, 150, 300]) {
      const rotate = () => d.api('POST', `${base(c.project.id)}/rot/rotate-credential`, { token: c.admin.token });
      const rotations = [rotate(), new Promise((r) => setTimeout(r, gap)).then(rotate)];
      for (let i = 0; i < 8; i++) statuses.push((await d.api('GET', `${base(c.project.id)}/rot/stats`, { token: c.member.token })).status);
      const done = await Promise.all(rotations);
      for (const r of done) expect(r.status).toBe(200);
      last = instanceRow(d, c.project.id, 'rot')!.password;
      await waitState(d, c.admin.token, c.project.id, 'rot');
    }
    expect(statuses.every((s) => s === 200), statuses.join(',')).toBe(true);
    const row = instanceRow(d, c.project.id, 'rot')!;
    const { authedCommand } = await import('../../src/daemon/services/cache/resp.js');
    expect(await authedCommand(row.port, last, ['PING'], 2_000)).toBe('PONG');
  });

  it('ten rotations in a row (queued restarts): stats never fail with 500, and the server ends on the newest password', async () => {
    // While restarts are queued, a read may land on a server holding an intermediate password
    // past its 3 s budget on a loaded machine (502, recorded in docs/decisions/cache.md); it must
    // answer in the envelope, and once the instance settles the newest password is in force.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10; i++) expect((await d.api('POST', `${base(c.project.id)}/rot/rotate-credential`, { token: c.admin.token })).status).toBe(200);
      for (let i = 0; i < 5; i++) {
        const r = await d.api('GET', `${base(c.project.id)}/rot/stats`, { token: c.member.token });
        expect([200, 502, 503], r.text).toContain(r.status);
        if (r.status !== 200) expect(r.body.request_id).toMatch(/^req_/);
      }
      await waitState(d, c.admin.token, c.project.id, 'rot');
    }
    const deadline = Date.now() + 30_000;
    const row = () => instanceRow(d, c.project.id, 'rot')!;
    const { authedCommand } = await import('../../src/daemon/services/cache/resp.js');
    // The queued restarts settle on the newest password; the old ones stop working.
    for (;;) {
      const ok = await authedCommand(row().port, row().password, ['PING'], 2_000).then(() => true, () => false);
      if (ok || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await authedCommand(row().port, row().password, ['PING'], 2_000)).toBe('PONG');
    expect((await d.api('GET', `${base(c.project.id)}/rot/stats`, { token: c.member.token })).status).toBe(200);
  });

});
