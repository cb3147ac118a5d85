/**
 * Additions to acct_invitations (created by the accounts area): who revoked an invitation and
 * when, so the list can show it. The state column keeps 'open' until a move; expiry is derived
 * from the clock, never written.
 */
export const invitationMigrations = [
  `
  ALTER TABLE acct_invitations ADD COLUMN revoked_at TEXT;
  ALTER TABLE acct_invitations ADD COLUMN revoked_by TEXT;
  CREATE INDEX acct_invitations_project ON acct_invitations(project_id, email);
  `,
];
