import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Service } from '@kubernetes-models/knative/serving.knative.dev/v1/Service';
import { cliSandbox } from '../helpers/cli.js';

/**
 * `platform services` against a real daemon the CLI starts: every command's human and --json
 * output, the sparse update, the split flags, the spec through the CLI, confirmations and the
 * next steps errors give. Nothing here needs an instance to run (see cli-wait for --wait).
 */

const cli = cliSandbox();
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'platform-svc-cli-'));
  const secret = await cli.run(['secrets', 'set', 'db-url'], { input: 'postgres://db.internal/app' });
  expect(secret.exitCode, secret.stderr).toBe(0);
});

afterAll(async () => {
  await cli.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('platform services', () => {
  it('create sends the flags, shows the service and its first revision; --json is the Service', async () => {
    const r = await cli.run([
      'services', 'create', 'web', '--image', 'platform-none:local',
      '--env', 'MODE=prod', '--env', 'API_KEY=abc=def', '--secret-env', 'DATABASE_URL=db-url',
      '--port', '3000', '--min-scale', '0', '--max-scale', '3', '--concurrency', '5', '--timeout', '60', '--publish', '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = r.json;
    expect(s).toMatchObject({
      name: 'web',
      image: 'platform-none:local',
      env: { MODE: 'prod', API_KEY: 'abc=def' },
      env_from: [{ secret_name: 'db-url', env_name: 'DATABASE_URL' }],
      ports: [{ name: 'http1', container_port: 3000 }],
      scaling: { min_scale: 0, max_scale: 3, container_concurrency: 5 },
      timeout_seconds: 60,
      published: true,
      latest_created_revision: 'web-00001',
      generation: 1,
    });
    // Human output: the fields a person reads first, the next step on stderr.
    const human = await cli.run(['services', 'create', 'plain', '--image', 'platform-none:local']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^name\s+plain$/m);
    expect(human.stdout).toMatch(/^latest_created\s+plain-00001$/m);
    expect(human.stdout).toMatch(/^scaling\s+0-10 instances, 80 in flight each$/m);
    expect(human.stdout).toMatch(/not published: answers 404/);
    expect(human.stderr).toMatch(/platform services get plain/);
  });

  it('list shows each service with its split; get shows the addresses and the conditions', async () => {
    const list = await cli.run(['services', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+STATE\s+READY\s+LATEST\s+TRAFFIC\s+URL$/m);
    expect(list.stdout).toMatch(/^web\s+\S+\s+(yes|no)\s+\S+\s+web-00001 100%\s+http:\/\/web-[a-z0-9]+\.apps\.localhost:\d+$/m);
    expect(list.stdout).toMatch(/^plain\s.*private$/m);
    const json = await cli.run(['services', 'list', '--json']);
    expect(json.json.services.map((s: { name: string }) => s.name).sort()).toEqual(['plain', 'web']);
    expect(json.json).not.toHaveProperty('next_page_token');

    const get = await cli.run(['services', 'get', 'web', '--conditions']);
    expect(get.exitCode, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/^internal_url\s+http:\/\/127\.0\.0\.1:\d+\/services\/[a-z0-9]+\/web$/m);
    expect(get.stdout).toMatch(/^secret_env\s+DATABASE_URL <- db-url$/m);
    for (const c of ['Ready', 'ServiceReady', 'TrafficAccepted', 'Exposed', 'RuntimeClassApplied', 'VisibilityEnforced']) expect(get.stdout).toMatch(new RegExp(`^${c}\\s+(True|False|Unknown)`, 'm'));
    const gone = await cli.run(['services', 'get', 'nope']);
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toMatch(/service nope not found/);
    expect(gone.stderr).toMatch(/next: list the services with `platform services list`/);
  });

  it('update is sparse: one variable set or removed, others kept; no template change makes no revision; scaling merges', async () => {
    const up = await cli.run(['services', 'update', 'web', '--env', 'MODE-', '--env', 'LEVEL=2', '--json']);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.json.env).toEqual({ API_KEY: 'abc=def', LEVEL: '2' });
    expect(up.json.latest_created_revision).toBe('web-00002');
    expect(up.json.env_from).toEqual([{ secret_name: 'db-url', env_name: 'DATABASE_URL' }]);

    const scale = await cli.run(['services', 'update', 'web', '--max-scale', '5']);
    expect(scale.exitCode, scale.stderr).toBe(0);
    expect(scale.stderr).toMatch(/no template change: no new revision/);
    const s = (await cli.run(['services', 'get', 'web', '--json'])).json;
    expect(s.scaling).toEqual({ min_scale: 0, max_scale: 5, container_concurrency: 5 });
    expect(s.latest_created_revision).toBe('web-00002');
    expect(s.ports).toEqual([{ name: 'http1', container_port: 3000 }]);

    // --h2c alone keeps the port; --no-publish closes the public address without a revision.
    const h2c = await cli.run(['services', 'update', 'web', '--h2c', '--no-publish', '--json']);
    expect(h2c.json.ports).toEqual([{ name: 'h2c', container_port: 3000 }]);
    expect(h2c.json.published).toBe(false);

    const nothing = await cli.run(['services', 'update', 'web']);
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toMatch(/nothing to change/);
  });

  it('revisions lists newest first with state, share and image', async () => {
    const r = await cli.run(['services', 'revisions', 'web']);
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^REVISION\s+GENERATION\s+STATE\s+TRAFFIC\s+TAG\s+INSTANCES\s+IMAGE\s+REASON\s+CREATED$/);
    expect(lines[1]).toMatch(/^web-00003\s+/);
    expect(lines.at(-1)).toMatch(/^web-00001\s+1\s+(ready|not_ready|unknown)\s/);
    const json = await cli.run(['services', 'revisions', 'web', '--json']);
    expect(json.json.revisions.map((x: { name: string }) => x.name)).toEqual(['web-00003', 'web-00002', 'web-00001']);
  });

  it('traffic replaces the split (numbers or names, latest), tags get an address; the split is checked before sending', async () => {
    const r = await cli.run(['services', 'traffic', 'web', '--to', '1=30', '--to', 'latest=70', '--tag', 'web-00001=old', '--tag', '2=blue']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^requested: web-00001 30% \(old\), latest 70%, web-00002 0% \(blue\)$/m);
    expect(r.stdout).toMatch(/^web-00001\s+30%\s+old\s+http:\/\/old-web-[a-z0-9]+\.apps\.localhost:\d+$/m);
    const s = (await cli.run(['services', 'traffic', 'web', '--json'])).json;
    expect(s.traffic).toEqual([
      { revision_name: 'web-00001', percent: 30, tag: 'old' },
      { latest_revision: true, percent: 70 },
      { revision_name: 'web-00002', percent: 0, tag: 'blue' },
    ]);

    const sum = await cli.run(['services', 'traffic', 'web', '--to', '1=40', '--to', 'latest=50']);
    expect(sum.exitCode).toBe(2);
    expect(sum.stderr).toMatch(/sums to 90 percent, not 100/);
    const twice = await cli.run(['services', 'traffic', 'web', '--to', '1=50', '--to', 'web-00001=50']);
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toMatch(/names web-00001 twice/);
    const unknown = await cli.run(['services', 'traffic', 'web', '--to', '9=100']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(/unknown revision web-00009/);
    expect(unknown.stderr).toMatch(/next: the revisions are listed by `platform services revisions web`/);
  });

  it('spec prints Knative Service documents that pass the published schema, secret-looking values redacted; -o writes a file', async () => {
    const r = await cli.run(['services', 'spec', 'web']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('abc=def');
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS());
    expect(docs.length).toBeGreaterThan(1); // the pinned older revisions come first
    for (const doc of docs) expect(() => new Service(doc).validate()).not.toThrow();
    const last = docs.at(-1);
    expect(last.metadata.labels).toEqual({ 'networking.knative.dev/visibility': 'cluster-local' });
    expect(last.spec.template.metadata.name).toBe('web-00003');
    expect(last.spec.template.spec.containers[0].env).toContainEqual({ name: 'API_KEY', value: '***REDACTED***' });
    expect(last.spec.traffic).toContainEqual({ revisionName: 'web-00001', latestRevision: false, percent: 30, tag: 'old' });

    const file = join(dir, 'web.yaml');
    const o = await cli.run(['services', 'spec', 'web', '-o', file]);
    expect(o.exitCode, o.stderr).toBe(0);
    expect(o.stdout).toBe('');
    const json = await cli.run(['services', 'spec', 'web', '--json']);
    expect(Object.keys(json.json).sort()).toEqual(['note', 'service', 'yaml']);
    expect(json.json.yaml.trimEnd()).toBe(r.stdout);
  });

  it('metrics shows instances and each revision; logs prints text', async () => {
    const m = await cli.run(['services', 'metrics', 'web']);
    expect(m.exitCode, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/^instances\s+\d+ running \(desired \d+\)$/m);
    expect(m.stdout).toMatch(/^web-00003 \(latest created\)\s+\S+\s+\d+%\s+\d+$/m);
    const json = (await cli.run(['services', 'metrics', 'web', '--json'])).json;
    for (const k of ['service', 'instances', 'revisions', 'state', 'ready', 'readiness', 'scaling', 'note']) expect(json).toHaveProperty(k);

    const logs = await cli.run(['services', 'logs', 'web', '--tail', '5']);
    expect(logs.exitCode, logs.stderr).toBe(0);
    expect(logs.stdout.length).toBeGreaterThan(0);
    const bad = await cli.run(['services', 'logs', 'web', '--tail', '0']);
    expect(bad.exitCode).toBe(2);
  });

  it('deploy DIR uploads the folder and creates the service; the same folder again makes no revision, a change does', async () => {
    const src = join(dir, 'hello');
    mkdirSync(src);
    writeFileSync(join(src, 'main.py'), 'import os\nprint("listening on", os.environ["PORT"])\n');
    writeFileSync(join(src, '.platformignore'), 'secret.txt\n');
    writeFileSync(join(src, 'secret.txt'), 'left out');
    const first = await cli.run(['services', 'deploy', src, '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ runtime: 'python', files: 2, service: { name: 'hello', latest_created_revision: 'hello-00001' } });
    expect(first.json.image).toMatch(/^source\.platform\.local\/[a-z0-9]+\/sha256-[0-9a-f]{64}$/);
    expect(first.json.service.image).toBe(first.json.image);

    const again = await cli.run(['services', 'deploy', src]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/no new revision/);
    writeFileSync(join(src, 'main.py'), 'import os\nprint("v2 on", os.environ["PORT"])\n');
    const changed = await cli.run(['services', 'deploy', src, '--name', 'hello', '--env', 'V=2', '--json']);
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(changed.json.service.latest_created_revision).toBe('hello-00002');
    expect(changed.json.service.env).toEqual({ V: '2' });
    expect(changed.json.image).not.toBe(first.json.image);

    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const none = await cli.run(['services', 'deploy', empty]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toMatch(/has no server to start/);
    const wrong = await cli.run(['services', 'deploy', src, '--runtime', 'go']);
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toMatch(/runs as python, not go/);
  });

  it('--wait on a revision that cannot serve stops with the reason and exit 1', async () => {
    const r = await cli.run(['services', 'create', 'broken', '--image', 'platform-does-not-exist:local', '--wait', '--wait-timeout', '50']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/broken revision broken-00001 is not ready/);
    expect(r.stderr).toMatch(/✗ broken: not ready/);
  }, 70_000);

  it('usage errors exit 2 before anything is sent; delete asks, --json needs --yes, then the service is gone', async () => {
    const env = await cli.run(['services', 'create', 'x', '--image', 'i', '--env', 'NOEQUALS']);
    expect(env.exitCode).toBe(2);
    expect(env.stderr).toMatch(/--env NOEQUALS is not KEY=VALUE/);
    const noImage = await cli.run(['services', 'create', 'x']);
    expect(noImage.exitCode).toBe(2);

    const ask = await cli.run(['services', 'delete', 'plain']);
    expect(ask.exitCode).toBe(2);
    expect(ask.stderr).toMatch(/pass --yes/);
    const json = await cli.run(['services', 'delete', 'plain', '--json']);
    expect(json.exitCode).toBe(2);
    const del = await cli.run(['services', 'delete', 'plain', '--yes', '--json']);
    expect(del.exitCode, del.stderr).toBe(0);
    expect(del.json).toEqual({ name: 'plain', deleted: true });
    expect((await cli.run(['services', 'get', 'plain'])).exitCode).toBe(1);
  });

  it("open NAME hands the service's address to $BROWSER; --json prints it without opening", async () => {
    const created = await cli.run(['services', 'create', 'site', '--image', 'platform-none:local', '--publish', '--json']);
    expect(created.exitCode, created.stderr).toBe(0);
    const url = created.json.url as string;
    expect(url).toMatch(/^http:\/\/\S+$/);
    // A browser that records the address it was given, as xdg-open would receive it.
    const opened = join(dir, 'opened.txt');
    const browser = join(dir, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
    const open = await cli.run(['open', 'site'], { env: { BROWSER: browser } });
    expect(open.exitCode, open.stderr).toBe(0);
    expect(open.stdout).toBe('');
    expect(open.stderr).toContain(`opening ${url} (service site)`);
    // The browser runs detached: its file appears when it has run.
    for (let i = 0; i < 200 && !existsSync(opened); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(opened, 'utf8')).toBe(`${url}\n`);

    const json = await cli.run(['open', 'site', '--json'], { env: { BROWSER: browser } });
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json).toMatchObject({ name: 'site', kind: 'service', url });
    expect(typeof json.json.ready).toBe('boolean');
    // --json opened nothing: still the one address from the plain `open`.
    expect(readFileSync(opened, 'utf8')).toBe(`${url}\n`);
  });
});
