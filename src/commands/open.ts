import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag } from '../cli/flags.js';
import { openInBrowser } from '../client/open-browser.js';
import { ADDRESS_KINDS, publicAddress, type AddressKind } from '../client/public-address.js';

export default class Open extends BaseCommand {
  static override summary = "Open a workload's public address in the browser (agent, function, service or gateway endpoint)";
  static override description =
    'Opens the address with $BROWSER when set, else the system opener (xdg-open with a display, open on macOS); without one it prints the address. An agent or service and a gateway endpoint may share a name: the workload is opened unless --kind endpoint.';
  static override examples = [
    '<%= config.bin %> open hello',
    '<%= config.bin %> open hello --kind endpoint',
    '<%= config.bin %> open web --print',
    'curl "$(<%= config.bin %> open hello --print)"',
  ];
  static override args = { name: Args.string({ description: 'agent, function, service or gateway endpoint name', required: true }) };
  static override flags = {
    project: projectFlag,
    kind: Flags.string({ description: 'look only for this kind (agent covers functions)', options: [...ADDRESS_KINDS] }),
    print: Flags.boolean({ description: 'print the address instead of opening it' }),
  };

  async run() {
    const { args, flags } = await this.parse(Open);
    const project = this.projectRef(flags.project, flags.context);
    const { address, others } = await publicAddress(await this.client(), project, args.name, flags.kind as AddressKind | undefined);
    const result = { name: address.name, kind: address.kind, url: address.url, ready: address.ready, ...(address.message ? { message: address.message } : {}) };
    if (this.jsonEnabled()) return result;
    if (!address.ready) this.note(`note: ${address.kind} ${address.name} may not answer yet: ${address.message}`);
    for (const o of others) this.note(`there is also ${/^[ae]/.test(o.kind) ? 'an' : 'a'} ${o.kind} named ${o.name}: \`${this.config.bin} open ${o.name} --kind ${o.kind === 'function' ? 'agent' : o.kind}\``);
    if (flags.print || !(await openInBrowser(address.url))) {
      if (!flags.print) this.note('no browser to open it with (set BROWSER); the address:');
      this.log(address.url);
      return result;
    }
    this.note(`opening ${address.url} (${address.kind} ${address.name})`);
    return result;
  }
}
