import { readFileSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { SANDBOX_EXECUTE_TIMEOUT_MAX } from '../../api/sandbox.js';
import { execCode, execute, exitCodeOf, inputFiles, sandboxClient } from '../../client/sandbox.js';

export default class SandboxExec extends BaseCommand {
  static override summary = 'Run Python code in a throwaway, isolated sandbox';
  static override description =
    "Prints the code's stdout and stderr and exits with its exit code (124 when the sandbox stopped it: deadline or output limit). The sandbox has no network, none of your files, 1 CPU and 512 MiB; --file copies local files into its working directory first.";
  static override examples = [
    '<%= config.bin %> sandbox exec -c "print(6 * 7)"',
    '<%= config.bin %> sandbox exec script.py --file data.csv=./data.csv --timeout 60',
    'echo "print(1)" | <%= config.bin %> sandbox exec - --json',
  ];
  static override args = { file: Args.string({ description: 'a Python file to run (- reads stdin)' }) };
  static override flags = {
    code: Flags.string({ char: 'c', description: 'the code to run' }),
    file: Flags.string({ description: 'input file PATH=LOCAL, written into the working directory first (repeatable)', multiple: true }),
    timeout: Flags.integer({ description: `deadline in seconds (1-${SANDBOX_EXECUTE_TIMEOUT_MAX}, default 20)`, min: 1, max: SANDBOX_EXECUTE_TIMEOUT_MAX }),
  };

  async run() {
    const { args, flags } = await this.parse(SandboxExec);
    const code = execCode(flags.code, args.file, () => readFileSync(0, 'utf8'));
    const files = inputFiles(flags.file);
    const result = await execute(await sandboxClient(flags.context), { code, ...(files.length ? { files } : {}), ...(flags.timeout ? { timeout_s: flags.timeout } : {}) });
    const status = exitCodeOf(result);
    if (this.jsonEnabled()) {
      if (status === 0) return result;
      this.logJson(result);
    } else {
      process.stdout.write(result.stdout);
      process.stderr.write(result.stderr);
    }
    if (status !== 0) return this.exit(status);
    return result;
  }
}
