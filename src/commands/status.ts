import { Flags } from '@oclif/core';
import { createElement } from 'react';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag, projectQuery } from '../cli/agent-flags.js';
import { agentRoutes, type AgentView } from '../api/agents.js';

export default class Status extends BaseCommand {
  static override summary = 'Live dashboard of your agents and functions';
  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --once', '<%= config.bin %> status --json'];
  static override flags = {
    project: projectFlag,
    once: Flags.boolean({ description: 'print one frame and exit (the default when stdout is not a terminal)' }),
    interval: Flags.integer({ description: 'refresh interval in seconds', default: 2, min: 1 }),
  };

  async run() {
    const { flags } = await this.parse(Status);
    const client = await this.client();
    const load = async (): Promise<AgentView[]> => {
      const out: AgentView[] = [];
      let token = '';
      do {
        const page = await client.call(agentRoutes.list, { query: { ...projectQuery(flags.project, flags.context), page_size: 200, page_token: token || undefined } });
        out.push(...page.agents);
        token = page.next_page_token;
      } while (token);
      return out;
    };
    const { render } = await import('ink');
    if (this.jsonEnabled() || flags.once || !process.stdout.isTTY) {
      const agents = await load();
      if (!this.jsonEnabled()) {
        const { AgentsStatus } = await import('../tui/AgentsStatus.js');
        const app = render(createElement(AgentsStatus, { agents }), { patchConsole: false });
        app.unmount();
        await app.waitUntilExit();
      }
      return { agents };
    }
    const { StatusApp } = await import('../tui/StatusApp.js');
    const app = render(createElement(StatusApp, { load, intervalMs: flags.interval * 1000 }));
    await app.waitUntilExit();
    return undefined;
  }
}
