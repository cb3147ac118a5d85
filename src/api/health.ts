import { z } from 'zod';
import { route } from './contract.js';

export const Health = z.object({ status: z.literal('ok'), version: z.string() });

export const healthRoutes = {
  healthz: route({
    id: 'health.get',
    method: 'GET',
    path: '/healthz',
    summary: 'Liveness of the daemon',
    auth: 'none',
    unlimited: true,
    status: 200,
    response: Health,
  }),
};

export const openApiRoute = route({
  id: 'openapi.get',
  method: 'GET',
  path: '/v1/openapi.json',
  summary: 'The OpenAPI document of this API, generated from the route contracts',
  auth: 'none',
  status: 200,
  response: z.object({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }).passthrough(),
});
