import { describe, expect, it } from 'vitest';
import { forPeople } from '../../src/client/api-hints.js';

/** The API's texts name HTTP routes for HTTP clients; the CLI says the command instead. */
describe('API hints said for people', () => {
  it.each([
    [
      'this is a management endpoint and requires authentication: sign in via POST /v1/auth/login and send the token as Authorization: Bearer <token>',
      'not signed in, or the sign-in has ended',
    ],
    [
      'invoke requires a credential on this platform (INVOKE_AUTH_REQUIRED is true): send Authorization: Bearer <token>',
      'invoke requires a credential on this platform (INVOKE_AUTH_REQUIRED is true): the CLI sent no credential',
    ],
    [
      'agent hello has no running instance: it is scaled to zero (or not started yet); the next request starts one. Persisted lines: GET /v1/agents/hello/logs/history',
      'agent hello has no running instance: it is scaled to zero (or not started yet); the next request starts one. Persisted lines: `platform logs hello --history`',
    ],
    ['password change required: change your password via POST /v1/auth/change-password first', 'password change required: change your password with `platform passwd` first'],
    ['memorystore sess not found', 'cache sess not found'],
  ])('%s', (api, person) => {
    expect(forPeople(api)).toBe(person);
  });

  it('leaves a text with no known route as it is', () => {
    expect(forPeople('agent x not found')).toBe('agent x not found');
  });
});
