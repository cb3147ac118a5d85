import { describe, expect, it } from 'vitest';
import type { ServiceView } from '../../src/api/serverless.js';
import { UsageError } from '../../src/client/errors.js';
import { createBody, parseSecretEnv, patchBody, revisionName, shortImage, trafficFrom } from '../../src/client/services.js';

/** The flag-to-body rules of `platform services` that need no daemon to check. */

const current = {
  env: { A: '1', B: '2' },
  env_from: [{ secret_name: 'db-url', env_name: 'DATABASE_URL' }, { secret_name: 'api-token' }],
  ports: [{ name: 'h2c', container_port: 9000 }],
} as unknown as ServiceView;

describe('services flags to bodies', () => {
  it('create sends only what the flags say', () => {
    expect(createBody('web', { image: 'img' })).toEqual({ name: 'web', image: 'img' });
    expect(createBody('web', { image: 'img', env: ['X=a=b'], 'secret-env': ['DB=db-url', 'token'], port: 3000, 'min-scale': 0, concurrency: 0, publish: false })).toEqual({
      name: 'web',
      image: 'img',
      env: { X: 'a=b' },
      env_from: [{ env_name: 'DB', secret_name: 'db-url' }, { secret_name: 'token' }],
      ports: [{ name: 'http1', container_port: 3000 }],
      scaling: { min_scale: 0, container_concurrency: 0 },
      publish: { enabled: false },
    });
  });

  it('update merges variables, removes with KEY-, replaces a secret variable, keeps the other half of the port', () => {
    expect(patchBody(current, {})).toEqual({});
    expect(patchBody(current, { env: ['B-', 'C=3', 'A=9'] }).env).toEqual({ A: '9', C: '3' });
    expect(patchBody(current, { 'secret-env': ['DATABASE_URL=db-v2'] }).env_from).toEqual([{ secret_name: 'api-token' }, { env_name: 'DATABASE_URL', secret_name: 'db-v2' }]);
    expect(patchBody(current, { 'remove-secret-env': ['api-token'] }).env_from).toEqual([{ secret_name: 'db-url', env_name: 'DATABASE_URL' }]);
    expect(patchBody(current, { port: 8081 }).ports).toEqual([{ name: 'h2c', container_port: 8081 }]);
    expect(patchBody(current, { h2c: false }).ports).toEqual([{ name: 'http1', container_port: 9000 }]);
    expect(patchBody(current, { 'max-scale': 4 })).toEqual({ scaling: { max_scale: 4 } });
    expect(() => patchBody(current, { env: ['=x'] })).toThrow(UsageError);
    expect(() => parseSecretEnv(['VAR='])).toThrow(/not VAR=SECRET/);
  });

  it('traffic: latest, numbers and names; tags outside the split at 0 percent; the sum and duplicates checked', () => {
    expect(revisionName('web', '2')).toBe('web-00002');
    expect(revisionName('web', 'web-00002')).toBe('web-00002');
    expect(trafficFrom('web', ['1=25%', 'latest=75'], ['latest=next', '3=canary'])).toEqual([
      { revision_name: 'web-00001', percent: 25 },
      { latest_revision: true, percent: 75, tag: 'next' },
      { revision_name: 'web-00003', percent: 0, tag: 'canary' },
    ]);
    expect(() => trafficFrom('web', ['1=50', '00001=50'])).toThrow(/names web-00001 twice/);
    expect(() => trafficFrom('web', ['1=50'])).toThrow(/sums to 50 percent/);
    expect(() => trafficFrom('web', ['1=half'])).toThrow(/not REVISION=PERCENT/);
    expect(() => trafficFrom('web', [], [])).toThrow(/give the split with --to/);
  });

  it('images are shortened for tables', () => {
    expect(shortImage(`source.platform.local/abc123/sha256-${'0123456789ab'.repeat(5)}0123`)).toBe('source:sha256-0123456789ab');
    expect(shortImage(`ghcr.io/a/b@sha256:${'f'.repeat(64)}`)).toBe('ghcr.io/a/b@sha256:ffffffffffff');
    expect(shortImage('busybox:1')).toBe('busybox:1');
  });
});
