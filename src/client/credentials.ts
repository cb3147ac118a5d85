import { SecretStore } from './secret-store.js';

export interface StoredCredential {
  /** A session token or an API key (`svc_...`). */
  token: string;
  email?: string;
  /** Unix seconds; absent for API keys without expiry. */
  expiresAt?: number;
  /** A session's refresh token (single use: each refresh stores the next one). */
  refreshToken?: string;
  refreshExpiresAt?: number;
  /** The key the CLI made for itself on the local context (revoked by `platform logout`). */
  automatic?: boolean;
}

/** Credentials per context (the keychain, else the 0600 credentials.json: see SecretStore). */
export class CredentialStore extends SecretStore<StoredCredential> {
  constructor() {
    super('platform-cli', 'credentials.json');
  }
}
