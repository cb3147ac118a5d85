/** `npm run bench`: runs every benchmark section and prints one table. */
import { printTable, type Row } from './lib.js';
import { cacheBench } from './cache.js';
import { coreBench } from './core.js';
import { agentsBench } from './agents.js';
import { messagingBench } from './messaging.js';
import { vectorBench } from './vector.js';
import { mcpBench } from './mcp.js';
import { serverlessBench } from './serverless.js';
import { gatewayBench } from './gateway.js';
import { triggersBench } from './triggers.js';
import { sandboxBench } from './sandbox.js';
import { sessionsBench } from './sessions.js';
import { knowledgeBench } from './knowledge.js';
import { remoteBench } from './remote.js';
import { devBench } from './dev.js';
import { statusBench } from './status.js';
import { daemonSpeedBench } from './daemon-speed.js';

const sections: Array<[string, () => Promise<Row[]>]> = [
  ['core', coreBench],
  // Issue 26: daemon start (empty and seeded), RSS at rest and per area, invoke overhead vs the same instance.
  ['daemon', daemonSpeedBench],
  ['agents', agentsBench],
  ['cache', cacheBench],
  ['messaging', messagingBench],
  ['vector', vectorBench],
  ['mcp', mcpBench],
  ['serverless', serverlessBench],
  ['gateway', gatewayBench],
  ['triggers', triggersBench],
  ['sandbox', sandboxBench],
  ['sessions', sessionsBench],
  ['knowledge', knowledgeBench],
  ['remote', remoteBench],
  ['dev', devBench],
  ['status', statusBench],
];

const only = process.argv[2];
const rows: Row[] = [];
for (const [name, fn] of sections) {
  if (only && only !== name) continue;
  process.stderr.write(`running ${name} benchmarks...\n`);
  rows.push(...(await fn()));
}
printTable(rows);
