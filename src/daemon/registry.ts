import type { Area } from './area.js';
import { healthArea } from './services/health/routes.js';
import { authArea } from './services/auth/routes.js';
import { accountsArea } from './services/accounts/routes.js';
import { invitationsArea } from './services/invitations/routes.js';
import { serviceAccountsArea } from './services/service-accounts/routes.js';
import { auditArea } from './services/audit/routes.js';
import { createCacheArea } from './services/cache/routes.js';
import { createAgentsArea } from './services/agents/routes.js';
import { messagingArea } from './services/messaging/routes.js';
import { secretsArea } from './services/secrets/routes.js';
import { createMcpArea } from './services/mcp/routes.js';
import { vectorArea } from './services/vector/routes.js';
import { createServerlessArea, type PlaneFactory } from './services/serverless/routes.js';
import { createSandboxArea } from './services/sandbox/routes.js';
import { makeDataPlane } from './services/serverless/make-plane.js';
import { createGatewayArea } from './services/gateway/routes.js';
import { createTriggersArea } from './services/triggers/routes.js';
import { sessionsArea } from './services/sessions/routes.js';
import { knowledgeArea } from './services/knowledge/routes.js';
import { searchArea } from './services/search/routes.js';
import { createAgentActivityArea } from './services/agent-activity/routes.js';
import { embedArea } from './services/embed/routes.js';
import { operationsArea } from './services/operations/routes.js';

/**
 * Every area of the daemon, in start order; they stop in reverse (gateway and triggers first,
 * workloads next, the store last). The accounts area comes first because the others use its tables.
 * `serverlessPlane` lets control-plane tests watch what the data plane is told (never set in the daemon).
 */
export function allAreas(opts: { serverlessPlane?: PlaneFactory } = {}): Area[] {
  return [accountsArea, healthArea, operationsArea(), authArea, invitationsArea, serviceAccountsArea, auditArea, createAgentsArea(), sessionsArea, createCacheArea(), messagingArea(), secretsArea, createMcpArea(), vectorArea(), createServerlessArea(opts.serverlessPlane ?? makeDataPlane), createSandboxArea(), createGatewayArea(), createTriggersArea(), knowledgeArea(), createAgentActivityArea(), embedArea(), searchArea];
}
