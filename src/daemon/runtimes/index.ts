/**
 * PLACEHOLDER owned by the `shims` branch: the lead replaces this file with the shims helper's
 * version at merge. It keeps the agreed interface so the agents area compiles and its tests run:
 * the shim listens on 127.0.0.1:$PORT, serves /healthz and the spec 1 §4.13 contract.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type ShimRuntime = 'python' | 'nodejs' | 'go' | 'ruby';
export type AgentFramework = 'adk' | 'langgraph' | 'crewai';
export interface Cmd {
  cmd: string;
  args: string[];
}

/** Shim files live in the source tree (they are not TypeScript, so tsc does not copy them). */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'daemon', 'runtimes');

export function runtimeCommand(runtime: ShimRuntime, workloadDir: string): { build?: Cmd; start: Cmd } {
  if (runtime === 'python') return { start: { cmd: 'python3', args: [join(root, 'python', 'shim.py'), workloadDir] } };
  throw new Error(`runtime ${runtime} is not available until the shims branch is merged`);
}

export function agentHarnessCommand(framework: AgentFramework, workloadDir: string): { build?: Cmd; start: Cmd } {
  throw new Error(`agent harness for ${framework} (${workloadDir}) is not available until the shims branch is merged`);
}
