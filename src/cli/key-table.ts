import type { KeyView } from '../api/auth.js';
import type { Column } from './render.js';

/** Columns of a key listing (personal and service-account keys alike); no column can carry a secret. */
export const keyColumns: Column<KeyView>[] = [
  { header: 'key id', get: (k) => k.key_id },
  { header: 'name', get: (k) => k.display_name },
  { header: 'state', get: (k) => k.state },
  { header: 'created', get: (k) => k.created_at },
  { header: 'expires', get: (k) => k.expires_at ?? 'never' },
  { header: 'last used', get: (k) => k.last_used_at },
];
