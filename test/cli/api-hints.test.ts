import { describe, expect, it } from 'vitest';
import { forPeople } from '../../src/client/api-hints.js';
import { MANAGEMENT_AUTH_REQUIRED } from '../../src/daemon/http/errors.js';
import { INVOKE_AUTH_MESSAGE } from '../../src/daemon/services/agents/invoke.js';
import { memoryOffMessage } from '../../src/daemon/services/sessions/memory.js';

/** The API's texts name HTTP routes for HTTP clients; the CLI says the command instead. */
describe('API hints said for people', () => {
  it.each([
    // The daemon's own texts where it names them, so a reworded message fails here, not for a person.
    [MANAGEMENT_AUTH_REQUIRED, 'not signed in, or the sign-in has ended'],
    [
      INVOKE_AUTH_MESSAGE,
      'invoke requires a credential on this platform (INVOKE_AUTH_REQUIRED is true): the CLI sent no credential',
    ],
    [
      'agent hello has no running instance: it is scaled to zero (or not started yet); the next request starts one. Persisted lines: GET /v1/agents/hello/logs/history',
      'agent hello has no running instance: it is scaled to zero (or not started yet); the next request starts one. Persisted lines: `platform logs hello --history`',
    ],
    ['password change required: change your password via POST /v1/auth/change-password first', 'password change required: change your password with `platform passwd` first'],
    ['memorystore sess not found', 'cache sess not found'],
    [
      memoryOffMessage('helper'),
      'memory is off for agent helper: turn it on with `platform memory policy helper --enable`',
    ],
    [
      'MEMORY_MODE is set by the memory policy: use PUT /v1/agents/{name}/memory/policy (platform memory policy AGENT)',
      'MEMORY_MODE is set by the memory policy: use `platform memory policy AGENT`',
    ],
  ])('%s', (api, person) => {
    expect(forPeople(api)).toBe(person);
  });

  it('leaves a text with no known route as it is', () => {
    expect(forPeople('agent x not found')).toBe('agent x not found');
  });
});
