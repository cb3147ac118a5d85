import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { AbortError } from '../client/errors.js';

/** Fails fast instead of hanging when a prompt is needed but nobody can answer it. */
export function requireTty(what: string, alternative: string): void {
  if (!process.stdin.isTTY) throw new AbortError(`${what} needs an interactive terminal, but stdin is not a TTY`, alternative, 2);
}

export async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
  }
}

/** Reads a password without echoing it: characters are masked while typed. */
export async function askHidden(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const out = rl as unknown as { _writeToOutput: (s: string) => void; output: NodeJS.WriteStream };
  let prompted = false;
  out._writeToOutput = (s: string) => {
    if (!prompted) {
      prompted = true;
      out.output.write(s);
    } else if (s.includes('\n') || s.includes('\r')) out.output.write('\n');
  };
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
  }
}

/** Reads all of stdin (for --password-stdin and values piped in). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A secret value, never from argv (like `gh secret set`): the file named by --from-file, else
 * piped stdin (one trailing newline dropped, as `echo` adds it), else a hidden prompt.
 */
export async function readSecretValue(file?: string): Promise<string> {
  if (file) {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new AbortError(`cannot read ${file}: ${(e as Error).message}`);
    }
  }
  if (!process.stdin.isTTY) return (await readStdin()).replace(/\r?\n$/, '');
  return askHidden('value (hidden): ');
}
