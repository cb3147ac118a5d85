/** Sealing lives in the shared module (agent secrets use it too); this adds the secrets rows' AAD. */
export { open, seal } from '../../crypto/sealed.js';

export const valueAad = (projectId: string, name: string, version: number) => `secret:${projectId}:${name}:${version}`;
