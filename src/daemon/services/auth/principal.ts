/** Who is calling, resolved from the bearer credential on every request (spec 1 §5). */
export type Principal =
  | {
      kind: 'user';
      userId: string;
      email: string;
      platformRole: 'admin' | 'user';
      mustChangePassword: boolean;
      /** Session tokens expire; a personal key may carry its own expiry. */
      expiresAt?: number;
      credential: 'session' | 'personal_key';
      keyId?: string;
    }
  | {
      kind: 'service_account';
      serviceAccountId: string;
      projectId: string;
      email: string;
      keyId: string;
      expiresAt?: number;
    }
  | {
      kind: 'workload';
      projectId: string;
      workload: string;
      keyId: string;
      email: string;
    };

export type PersonPrincipal = Extract<Principal, { kind: 'user' }>;

export const isMachine = (p: Principal) => p.kind !== 'user';

/** Stable key for rate limiting and audit. */
export function principalKey(p: Principal): string {
  if (p.kind === 'user') return `user:${p.userId}`;
  return `${p.kind}:${p.keyId}`;
}

export const actorName = (p: Principal | undefined) => (p ? p.email : 'anonymous');
