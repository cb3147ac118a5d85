import { randomBytes } from 'node:crypto';

/**
 * The per-instance secret that proves a request came through the daemon (docs/decisions/agents.md,
 * "Instances answer only the daemon"). The supervisor makes one per instance and hands it to the
 * shim in this variable; the shim takes it out of its environment before it loads user code and
 * refuses (403, no handler output) any request whose header does not carry it.
 */
export const INSTANCE_SECRET_ENV = 'PLATFORM_INSTANCE_SECRET';
export const INSTANCE_SECRET_HEADER = 'x-platform-instance-secret';

export const newInstanceSecret = () => randomBytes(32).toString('base64url');

/** The header a request to an instance carries. */
export const instanceHeaders = (secret: string): Record<string, string> => ({ [INSTANCE_SECRET_HEADER]: secret });
