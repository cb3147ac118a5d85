import { Resolver } from 'node:dns/promises';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { findProject } from '../accounts/access.js';
import { cnameTarget } from './address.js';
import { gatewayStore } from './store.js';

/**
 * The domain sweep (spec 2 §3: "verified ... on the platform's next sweep after the DNS record is
 * set"): every `verifyIntervalMs`, each unverified claim's CNAME is resolved through the
 * configured resolvers (PLATFORM_GATEWAY_DNS) and the claim is verified once it names
 * `<project_short>.<gateway_domain>`. Verification is one-way: a record removed later does not
 * unverify (docs/decisions/gateway.md, "Domains").
 */
export class DomainSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly resolver = new Resolver({ timeout: 2_000, tries: 1 });

  constructor(private readonly ctx: AreaContext) {
    if (ctx.config.gateway.dnsServers.length) this.resolver.setServers(ctx.config.gateway.dnsServers);
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.ctx.config.gateway.verifyIntervalMs);
    this.timer.unref();
  }

  /** One pass; overlapping ticks share the pass in flight. */
  sweep(): Promise<void> {
    return (this.running ??= this.pass().finally(() => (this.running = undefined)));
  }

  private async pass(): Promise<void> {
    for (const claim of gatewayStore.unverified(this.ctx.db)) {
      const project = findProject(this.ctx.db, claim.project_id);
      if (!project) continue;
      const want = cnameTarget(this.ctx.config, project.short);
      let names: string[] = [];
      try {
        names = await this.resolver.resolveCname(claim.hostname);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code !== 'ENODATA' && code !== 'ENOTFOUND') this.ctx.log.warn(`gateway: resolving ${claim.hostname} failed: ${code ?? (e as Error).message}`);
      }
      const verified = names.some((n) => n.toLowerCase().replace(/\.$/, '') === want);
      // The claim may have been released while the resolver answered: the update then touches nothing.
      gatewayStore.markChecked(this.ctx.db, claim.hostname, isoNow(this.ctx.clock), verified);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
