import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { summary?: string; examples?: string[]; flags: Record<string, unknown> }>;
};
const ours = Object.entries(manifest.commands);

describe('the command tree', () => {
  it('every command has a summary, examples and --json', () => {
    expect(ours.length).toBeGreaterThan(8);
    for (const [id, c] of ours) {
      expect(c.summary, id).toBeTruthy();
      expect(c.examples?.length, id).toBeGreaterThan(0);
      expect(Object.keys(c.flags), id).toContain('json');
    }
  });

  it('--help shows usage and examples, and the shell completion script is available', async () => {
    const cli = cliSandbox();
    const help = await cli.run(['projects', 'list', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/USAGE\s+\$ platform projects list/);
    expect(help.stdout).toMatch(/EXAMPLES/);
    const completion = await cli.run(['completion', 'bash']);
    expect(completion.exitCode).toBe(0);
    expect(completion.stdout).toMatch(/^complete -F _platform_complete platform$/m);
    await cli.stop();
  });
});
