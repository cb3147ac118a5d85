import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPath } from '../src/client/api-client.js';
import type { RouteContract } from '../src/api/contract.js';
import { startTestDaemon, type TestDaemon } from './helpers/daemon.js';
import { cast } from './helpers/fixtures.js';

/**
 * The authorization rules of spec 1 §5, checked over EVERY registered route of every area, so a
 * new area inherits the checks without writing them again.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let routes: RouteContract[];
beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  routes = d.app.router.contracts();
});
afterAll(() => d.close());

const MISSING_PROJECT = '00000000-0000-4000-8000-000000000000';

function pathFor(r: RouteContract, projectId: string): string {
  const names = [...r.path.matchAll(/\{(\w+)(?:\.\.\.)?\}/g)].map((m) => m[1]!);
  const params = Object.fromEntries(names.map((n) => [n, n === 'projectID' ? projectId : 'zz-missing']));
  return buildPath(r.path, params);
}

describe('authorization matrix over every route', () => {
  it('anonymous callers get 401 on every route that needs a credential', async () => {
    const gated = routes.filter((r) => r.auth !== 'none');
    expect(gated.length).toBeGreaterThan(3);
    for (const r of gated) {
      const res = await d.api(r.method, pathFor(r, c.project.id), { body: r.body ? {} : undefined });
      expect(res.status, `${r.method} ${r.path}`).toBe(401);
      expect(res.body.error, `${r.method} ${r.path}`).toMatch(/^this is a management endpoint/);
    }
  });

  it('a caller with no grant on a project gets the same 404 as for a missing project, on every project route', async () => {
    const scoped = routes.filter((r) => r.auth !== 'none' && r.path.includes('{projectID}'));
    expect(scoped.length).toBeGreaterThan(0);
    const other = await cast(d);
    for (const r of scoped) {
      const label = `${r.method} ${r.path}`;
      const outsider = await d.api(r.method, pathFor(r, c.project.id), { token: c.outsider.token, body: r.body ? {} : undefined });
      const missing = await d.api(r.method, pathFor(r, MISSING_PROJECT), { token: c.admin.token, body: r.body ? {} : undefined });
      expect(outsider.status, label).toBe(404);
      expect(missing.status, label).toBe(404);
      expect(outsider.body.error, label).toBe(missing.body.error);
      // A service-account key of another project is an outsider too.
      const foreignKey = await d.api(r.method, pathFor(r, c.project.id), { token: other.sa.token, body: r.body ? {} : undefined });
      expect(foreignKey.status, label).toBe(404);
    }
  });

  it('routes that take the project as ?project= give an outsider the same 404 as a missing project', async () => {
    const byQuery = routes.filter((r) => r.auth !== 'none' && !r.path.includes('{projectID}') && 'project' in (((r.query as any)?.shape as object) ?? {}));
    expect(byQuery.length).toBeGreaterThan(5);
    const other = await cast(d);
    for (const r of byQuery) {
      const label = `${r.method} ${r.path}`;
      const at = (project: string) => `${pathFor(r, project)}?project=${project}`;
      const outsider = await d.api(r.method, at(c.project.id), { token: c.outsider.token, body: r.body ? {} : undefined });
      const missing = await d.api(r.method, at(MISSING_PROJECT), { token: c.admin.token, body: r.body ? {} : undefined });
      expect(outsider.status, label).toBe(404);
      expect(missing.status, label).toBe(404);
      expect(outsider.body.error, label).toBe(missing.body.error);
      expect((await d.api(r.method, at(c.project.id), { token: other.sa.token, body: r.body ? {} : undefined })).status, label).toBe(404);
    }
  });

  it('platform-admin routes refuse other people with 403 and machine credentials with 403', async () => {
    for (const r of routes.filter((x) => x.auth === 'platform-admin')) {
      const label = `${r.method} ${r.path}`;
      expect((await d.api(r.method, pathFor(r, c.project.id), { token: c.member.token, body: r.body ? {} : undefined })).status, label).toBe(403);
      expect((await d.api(r.method, pathFor(r, c.project.id), { token: c.sa.token, body: r.body ? {} : undefined })).status, label).toBe(403);
    }
  });

  it('person-only routes refuse service-account keys with 403', async () => {
    const personOnly = routes.filter((x) => x.auth === 'person');
    expect(personOnly.length).toBeGreaterThan(0);
    for (const r of personOnly) {
      const res = await d.api(r.method, pathFor(r, c.project.id), { token: c.sa.token, body: r.body ? {} : undefined });
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
    }
  });

  it('a person who owes a password change gets 403 everywhere but me and change-password', async () => {
    const { makeUser } = await import('./helpers/fixtures.js');
    const u = await makeUser(d, { mustChangePassword: true });
    for (const r of routes.filter((x) => x.auth !== 'none')) {
      const res = await d.api(r.method, pathFor(r, c.project.id), { token: u.token, body: r.body ? {} : undefined });
      if (r.allowBeforePasswordChange) expect(res.status, `${r.method} ${r.path}`).not.toBe(403);
      else {
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(res.body.error).toMatch(/password change required/);
      }
    }
  });
});
