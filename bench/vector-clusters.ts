/**
 * Does the benchmark's data stay "clustered so recall is meaningful" (issue 6) at a given size?
 * For a few held-out queries: the share of the exact ten nearest neighbours that are in the query's
 * own cluster, and the score gap between the 1st and the 10th and 100th neighbours.
 * Run: npx tsx bench/vector-clusters.ts [n] [queries]
 */
import { dataset } from './vector-data.js';
const n = Number(process.argv[2] ?? 100_000);
const nq = Number(process.argv[3] ?? 5);
const dims = 768;
const { base, queries, clusters } = dataset(n, nq, dims);
let same = 0;
const gaps: string[] = [];
for (let qi = 0; qi < nq; qi++) {
  const q = queries.subarray(qi * dims, (qi + 1) * dims);
  const scores = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    const o = i * dims;
    for (let j = 0; j < dims; j++) s += base[o + j]! * q[j]!;
    scores[i] = s;
  }
  const order = Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]!).slice(0, 100);
  same += order.slice(0, 10).filter((i) => clusters[i] === clusters[n + qi]).length;
  gaps.push(`${scores[order[0]!]!.toFixed(3)}/${scores[order[9]!]!.toFixed(3)}/${scores[order[99]!]!.toFixed(3)}`);
}
console.log(`n=${n}: ${((100 * same) / (10 * nq)).toFixed(0)}% of the true top 10 share the query's cluster; scores 1st/10th/100th: ${gaps.join(' ')}`);
