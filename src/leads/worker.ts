import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { PlanLimits, PlanName } from '../config.js';
import { type DomainMetrics, NO_METRICS } from '../infra/metrics.js';
import { PollLoop } from '../infra/poll-loop.js';
import { nowIso } from '../time.js';
import type { AccountSlots } from './account-slots.js';
import type { LeadJobRow, LeadQueries } from './queries.js';
import { type JobEndedListener, LeaseLostError, type LeadService, presentJob } from './service.js';

/**
 * How long a claim holds a job without a sign of life. The instance running a job renews its lease every
 * `LEASE_MS / 4` for as long as the job runs, however slow the site or the LLM, so only an instance that stopped (or
 * lost the database for that long) lets a lease run out; another instance then takes the job over.
 */
export const LEASE_MS = 5 * 60 * 1000;
/** A job whose instance stopped this many times is not tried again. */
const MAX_ATTEMPTS = 3;
/** Queued jobs read per claim at most (each account's share already bounded by its plan). */
const CANDIDATES_MAX = 500;

export interface LeadWorkerDeps {
  queries: LeadQueries;
  leads: LeadService;
  /** The per-account bound shared with synchronous requests: a job is claimed only when its account has a free slot. */
  slots: AccountSlots;
  plans: Record<PlanName, PlanLimits>;
  pollMs: number;
  /** Jobs this instance runs at once (across accounts; AccountSlots bounds each account). */
  concurrency: number;
  log: FastifyBaseLogger;
  metrics?: Pick<DomainMetrics, 'leadJobEnded'>;
  /** Defaults to LEASE_MS; tests shorten it. */
  leaseMs?: number;
  /** How often the leases of the jobs in hand are renewed; defaults to a quarter of the lease. */
  renewEveryMs?: number;
  /** Told of a job given up here (the service tells of the others). */
  onJobEnded?: JobEndedListener;
}

/**
 * Runs the jobs queued with `Prefer: respond-async`. Jobs are leased in SQL, so several instances share one queue
 * without a second queue engine; a job is woken at once in the instance that queued it, by polling in the others.
 *
 * A claim takes only jobs that can start at once: each account's free slots in this instance (its plan's leads in
 * flight, less those running here), in submission order, so one account's backlog neither waits here under a lease
 * nor holds back other accounts' jobs. Every claim draws a token; the leases of the jobs in hand are renewed while they
 * run, and every write of a run names its token, so a run whose job was taken over changes nothing any more.
 */
export class LeadWorker {
  private readonly loop: PollLoop;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();
  /** The claims whose jobs are in hand, with how many of their jobs still run. */
  private readonly owners = new Map<string, number>();
  private readonly leaseMs: number;

  constructor(private readonly deps: LeadWorkerDeps) {
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
    // A pass claims what this instance has room for and starts it; the jobs run on after the pass.
    this.loop = new PollLoop({
      pass: () => this.claim(),
      intervalMs: deps.pollMs,
      onError: (error) => this.deps.log.error({ err: error }, 'lead worker could not claim jobs'),
    });
  }

  start(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => void this.renew(), this.deps.renewEveryMs ?? Math.max(1, Math.floor(this.leaseMs / 4)));
    this.heartbeat.unref();
    this.loop.start();
  }

  /** A job was queued here (or a slot freed): look now rather than at the next poll; after the claim under way if one is. */
  wake(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    // The jobs in hand finish (their leases still renewed meanwhile).
    await Promise.allSettled([...this.running]);
    clearInterval(this.heartbeat);
  }

  private async renew(): Promise<void> {
    try {
      await this.deps.queries.renewLeases([...this.owners.keys()], new Date(Date.now() + this.leaseMs).toISOString());
    } catch (error) {
      this.deps.log.warn({ err: error }, 'lead worker could not renew its leases');
    }
  }

  private async claim(): Promise<void> {
    const room = this.deps.concurrency - this.running.size;
    if (room <= 0 || this.loop.stopping) return;
    const { queries, plans, slots } = this.deps;
    const now = new Date();
    const perAccount = { free: plans.free.concurrentLeads, pro: plans.pro.concurrentLeads, business: plans.business.concurrentLeads };
    const candidates = await queries.queueCandidates(now.toISOString(), perAccount, CANDIDATES_MAX);
    // Slots are taken before the claim, so a job claimed here starts at once.
    const chosen = [];
    for (const candidate of candidates) {
      if (chosen.length >= room) break;
      if (slots.tryAcquire(candidate.account_id, plans[candidate.plan].concurrentLeads)) chosen.push(candidate);
    }
    if (chosen.length === 0) return;
    const owner = randomUUID();
    let jobs: LeadJobRow[] = [];
    try {
      jobs = await queries.claimJobs(
        chosen.map((candidate) => candidate.id),
        owner,
        now.toISOString(),
        new Date(now.getTime() + this.leaseMs).toISOString(),
      );
    } finally {
      // Another instance may have claimed some of them meanwhile: their slots go back.
      const got = new Set(jobs.map((job) => job.id));
      for (const candidate of chosen) if (!got.has(candidate.id)) slots.release(candidate.account_id);
    }
    if (jobs.length === 0) return;
    this.owners.set(owner, jobs.length);
    for (const job of jobs) {
      const run = this.runOne(job, owner).finally(() => {
        slots.release(job.account_id);
        const left = (this.owners.get(owner) ?? 1) - 1;
        if (left === 0) this.owners.delete(owner);
        else this.owners.set(owner, left);
        this.running.delete(run);
        // A slot is free: more jobs may be waiting.
        this.wake();
      });
      this.running.add(run);
    }
  }

  private async runOne(job: LeadJobRow, owner: string): Promise<void> {
    try {
      if (job.attempts > MAX_ATTEMPTS) {
        // Failed on our side: its lead is given back to the monthly quota.
        const ended = {
          error_message: `Gave up after ${MAX_ATTEMPTS} attempts: the job was interrupted each time`,
          completed_at: nowIso(),
          updated_at: nowIso(),
          lease_until: null,
        };
        if (await this.deps.queries.failJob(job, ended, owner)) {
          await this.deps.onJobEnded?.(job.account_id, presentJob({ ...job, ...ended, status: 'failed' }));
          (this.deps.metrics ?? NO_METRICS).leadJobEnded('failed', (Date.parse(ended.completed_at) - Date.parse(job.created_at)) / 1000);
        }
        return;
      }
      await this.deps.leads.runClaimed(job, owner);
    } catch (error) {
      if (error instanceof LeaseLostError) {
        this.deps.log.warn(
          { job_id: job.id },
          'lead job was taken over by another claim after its lease ran out; this run stopped and wrote nothing more',
        );
        return;
      }
      this.deps.log.error({ err: error, job_id: job.id }, 'lead job failed on our side');
    }
  }
}
