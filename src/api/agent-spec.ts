import { z } from 'zod';
import { route } from './contract.js';
import { AgentConfig, AgentName } from './agents.js';
import { lazySchema } from './lazy.js';

/** What replaces a value that looks like a credential in GET /v1/agents/{name}/spec. */
export const REDACTED = '[redacted]';

/**
 * The agent's deploy spec (spec 1 §4.12 GET /spec; body not shown): what a redeploy from scratch
 * needs besides the source, like `gcloud run services describe --format export`. Secret values are
 * never shown (keys only); env values that look like credentials are replaced by REDACTED and
 * their keys listed in `redacted`.
 */
export const AgentSpec = lazySchema(() => z.object({
  name: z.string(),
  kind: z.enum(['agent', 'function']),
  framework: z.string(),
  runtime: z.string().optional(),
  config: AgentConfig,
  env: z.record(z.string(), z.string()),
  secrets: z.array(z.string()),
  revision: z.string().optional(),
}));

export const agentSpecRoutes = {
  spec: route({
    id: 'agents.spec',
    method: 'GET',
    path: '/v1/agents/{name}/spec',
    summary: "The agent's deploy spec, with secret values left out and secret-looking env values redacted",
    auth: 'any',
    params: lazySchema(() => z.object({ name: AgentName })),
    query: lazySchema(() => z.object({ project: z.string().optional() })),
    status: 200,
    response: lazySchema(() => z.object({ agent: z.string(), spec: AgentSpec, redacted: z.array(z.string()) })),
  }),
};
