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
