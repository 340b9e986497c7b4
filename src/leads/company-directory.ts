import { nowIso } from '../time.js';
import type { CompanyProfileQueries } from './queries.js';
import type { CompanyProfile, ResearchOutcome } from './research/index.js';

/** A research that fell back to the domain alone is retried sooner: the site may only have been down. */
const FALLBACK_TTL_MS = 60 * 60 * 1000;

export interface CompanyFacts {
  profile: CompanyProfile;
  /** Why the research knows only what the domain tells, when it does. */
  fallbackReason: string | null;
}

/**
 * Company research with a cache per domain (a table, so every instance shares it): many leads of one company cost
 * one fetch. Concurrent leads of one domain in this process wait for the same research rather than each fetching.
 */
export class CompanyDirectory {
  private readonly inFlight = new Map<string, Promise<CompanyFacts>>();

  constructor(
    private readonly profiles: CompanyProfileQueries,
    private readonly research: (domain: string) => Promise<ResearchOutcome>,
    private readonly ttlMs: number,
  ) {}

  async lookup(domain: string): Promise<CompanyFacts> {
    const cached = await this.profiles.find(domain, nowIso());
    if (cached) return { profile: JSON.parse(cached.profile) as CompanyProfile, fallbackReason: cached.fallback_reason };
    let pending = this.inFlight.get(domain);
    if (!pending) {
      pending = this.researchAndStore(domain).finally(() => this.inFlight.delete(domain));
      this.inFlight.set(domain, pending);
    }
    return pending;
  }

  private async researchAndStore(domain: string): Promise<CompanyFacts> {
    const outcome = await this.research(domain);
    const fetchedAt = Date.now();
    const ttl = outcome.profile.source === 'site' ? this.ttlMs : Math.min(this.ttlMs, FALLBACK_TTL_MS);
    await this.profiles.save({
      domain,
      profile: JSON.stringify(outcome.profile),
      source: outcome.profile.source,
      fallback_reason: outcome.fallbackReason,
      fetched_at: new Date(fetchedAt).toISOString(),
      expires_at: new Date(fetchedAt + ttl).toISOString(),
    });
    return { profile: outcome.profile, fallbackReason: outcome.fallbackReason };
  }
}
