import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Dialect } from '../db/connection.js';
import type { Database } from '../db/types.js';
import { nowIso } from '../time.js';
import { claimQueuedJobs, type LeadJobRow, updateJob } from './queries.js';
import type { LeadService } from './service.js';

/** Longer than any job takes (research ≤ ~10 s, an LLM with its retries ≤ ~2 min): an older lease means its instance stopped. */
const LEASE_MS = 5 * 60 * 1000;
/** A job whose instance stopped this many times is not tried again. */
const MAX_ATTEMPTS = 3;

export interface LeadWorkerDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  leads: LeadService;
  pollMs: number;
  /** Jobs this instance runs at once (across accounts; AccountSlots bounds each account). */
  concurrency: number;
  log: FastifyBaseLogger;
}

/**
 * Runs the jobs queued with `Prefer: respond-async`. Jobs are leased in SQL, so several instances share one queue
 * without a second queue engine; a job is woken at once in the instance that queued it, by polling in the others.
 */
export class LeadWorker {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();
  private claiming: Promise<void> | undefined;
  private lookAgain = false;
  private stopped = true;

  constructor(private readonly deps: LeadWorkerDeps) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** A job was queued here: look now rather than at the next poll. */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.claiming;
    await Promise.allSettled([...this.running]);
  }

  /** Claims what this instance has room for and starts it; resolves once the claimed jobs are started. */
  async tick(): Promise<void> {
    if (this.claiming) {
      // The claim under way may have looked already: look once more when it is done.
      this.lookAgain = true;
      return this.claiming;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = undefined;
      if (this.lookAgain) {
        this.lookAgain = false;
        this.wake();
      }
    });
    return this.claiming;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.tick()
        .catch((error) => this.deps.log.error({ err: error }, 'lead worker could not claim jobs'))
        .finally(() => {
          if (!this.stopped) this.schedule(this.deps.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  private async claim(): Promise<void> {
    const room = this.deps.concurrency - this.running.size;
    if (room <= 0 || this.stopped) return;
    const now = new Date();
    const jobs = await claimQueuedJobs(this.deps.db, this.deps.dialect, now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString(), room);
    for (const job of jobs) {
      const run = this.runOne(job).finally(() => {
        this.running.delete(run);
        // A slot is free: more jobs may be waiting.
        this.wake();
      });
      this.running.add(run);
    }
  }

  private async runOne(job: LeadJobRow): Promise<void> {
    try {
      if (job.attempts > MAX_ATTEMPTS) {
        await updateJob(this.deps.db, job.id, {
          status: 'failed',
          error_message: `Gave up after ${MAX_ATTEMPTS} attempts: the job was interrupted each time`,
          completed_at: nowIso(),
          updated_at: nowIso(),
          lease_until: null,
        });
        return;
      }
      await this.deps.leads.runClaimed(job);
    } catch (error) {
      this.deps.log.error({ err: error, job_id: job.id }, 'lead job failed on our side');
    }
  }
}
