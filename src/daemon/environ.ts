import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * Takes a variable out of the daemon's environment: out of process.env (so nothing the daemon
 * starts inherits it: builds, caches, workloads) and, best effort, out of the initial environment
 * block that /proc/<pid>/environ shows to other processes of the same user. Used for the
 * bootstrap admin password (docs/decisions.md, "Local bootstrap admin").
 */
export function forgetEnv(name: string): void {
  if (process.env[name] === undefined) return;
  scrubProcessEnviron(name);
  delete process.env[name];
}

/** Zeroes the variable's value in place through /proc/self/mem; silent where that is not allowed. */
function scrubProcessEnviron(name: string): void {
  try {
    const block = readFileSync('/proc/self/environ');
    const prefix = Buffer.from(`${name}=`);
    let start: number;
    if (block.subarray(0, prefix.length).equals(prefix)) start = prefix.length;
    else {
      const at = block.indexOf(Buffer.concat([Buffer.from([0]), prefix]));
      if (at < 0) return;
      start = at + 1 + prefix.length;
    }
    let end = block.indexOf(0, start);
    if (end < 0) end = block.length;
    const stat = readFileSync('/proc/self/stat', 'latin1');
    const envStart = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[47]); // field 50 of proc(5)
    if (!Number.isSafeInteger(envStart) || end <= start) return;
    const fd = openSync('/proc/self/mem', 'r+');
    try {
      writeSync(fd, Buffer.alloc(end - start), 0, end - start, envStart + start);
    } finally {
      closeSync(fd);
    }
  } catch {
    // no /proc (not Linux) or writing our own memory file refused: process.env still loses it
  }
}
