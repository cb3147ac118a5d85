import { getContext } from '../client/contexts.js';

/** --project for agent commands; without it the context's project, else the server's choice (spec 1 §4.1). */
export { projectFlag } from './project-flag.js';

export function projectQuery(flag: string | undefined, context?: string): { project?: string } {
  const ref = flag ?? getContext(context).project;
  return ref ? { project: ref } : {};
}
