import { Flags } from '@oclif/core';
import { getContext } from '../client/contexts.js';

/** --project for agent commands; without it the context's project, else the server's choice (spec 1 §4.1). */
export const projectFlag = Flags.string({ description: 'project slug, short or id (default: the current one)', env: 'PLATFORM_PROJECT' });

export function projectQuery(flag: string | undefined, context?: string): { project?: string } {
  const ref = flag ?? getContext(context).project;
  return ref ? { project: ref } : {};
}
