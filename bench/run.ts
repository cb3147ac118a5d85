/**
 * `npm run bench -- [--quick] [section ...]`: runs the sections named (every one when none), prints
 * one table (what, figure, baseline, ratio, goal, pass) and writes bench/results.json. A section that
 * throws becomes a failed row and the others still run; the exit code is 1 then.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { printTable } from './lib.js';
import { parseBenchArgs, type BenchOptions } from './options.js';
import { runSections, type Section } from './runner.js';
import { resultsDocument, type RunInfo } from './table.js';
import { cacheBench } from './cache.js';
import { cliStartBench } from './cli-start.js';
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

const sections: Array<[string, Section]> = [
  ['core', coreBench],
  // Issue 26: CLI start of commands that make one request, against node -e 0 plus that request.
  ['cli', cliStartBench],
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

const root = join(import.meta.dirname, '..');
const git = (args: string[]) => {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};

const { quick, only } = parseBenchArgs(process.argv.slice(2), sections.map(([name]) => name));
const opts: BenchOptions = { quick };
const started = performance.now();
const load = loadavg();
const date = new Date().toISOString();
const commit = git(['rev-parse', 'HEAD']);
const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
const { rows, ran } = await runSections(sections, opts, only, (line) => process.stderr.write(line + '\n'));
printTable(rows);
const info: RunInfo = {
  commit,
  dirty,
  date,
  mode: quick ? 'quick' : 'full',
  node: process.version,
  load_average: { start: load, end: loadavg() },
  wall_seconds: (performance.now() - started) / 1000,
  sections: ran,
};
const out = join(import.meta.dirname, 'results.json');
writeFileSync(out, JSON.stringify(resultsDocument(rows, info), null, 2) + '\n');
process.stderr.write(`${rows.length} rows in ${info.wall_seconds.toFixed(0)} s (load ${load.map((l) => l.toFixed(1)).join(' ')} at start, ${info.load_average.end.map((l) => l.toFixed(1)).join(' ')} at end); wrote ${out}\n`);
// Exits even if a failed section left a handle open (its daemons are detached and stop on their own).
process.exit(ran.some((s) => s.error) ? 1 : 0);
