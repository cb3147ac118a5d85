import { homedir } from 'node:os';
import { join } from 'node:path';

/** The daemon's state directory: PLATFORM_HOME, else ~/.platform. Its own module: the bundle's loader (code-cache.ts) needs it before any daemon code is loaded. */
export const stateHome = (env: NodeJS.ProcessEnv = process.env): string => env.PLATFORM_HOME || join(homedir(), '.platform');
