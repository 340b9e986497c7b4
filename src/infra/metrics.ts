// The Prometheus metrics of one app: a Registry of its own (never prom-client's global one: tests start many apps in
// one process), the metric definitions, and the narrow recorders the domains are given.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/connection.js';

export type FeedSyncOutcome = 'ok' | 'not_modified' | 'failed';
export type LeadJobEnd = 'completed' | 'failed' | 'rejected';
export type RefusalReason = 'requests_per_minute' | 'monthly_quota';

/** What the domains record; a no-op when metrics are off. */
export interface DomainMetrics {
  feedSynchronized(outcome: FeedSyncOutcome, seconds: number): void;
  leadJobEnded(status: LeadJobEnd, seconds: number): void;
  refused(reason: RefusalReason): void;
}

export const NO_METRICS: DomainMetrics = Object.freeze({
  feedSynchronized: () => undefined,
  leadJobEnded: () => undefined,
  refused: () => undefined,
});

const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SLOW_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];

export class Metrics implements DomainMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'masthead_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly requestSeconds = new Histogram({
    name: 'masthead_http_request_duration_seconds',
    help: 'Time from a request received to its answer sent, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  private readonly feedSyncs = new Counter({
    name: 'masthead_feed_syncs_total',
    help: 'Feed synchronizations run by this instance, by outcome (ok, not_modified, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly feedSyncSeconds = new Histogram({
    name: 'masthead_feed_sync_duration_seconds',
    help: 'How long a feed synchronization took, by outcome',
    labelNames: ['outcome'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });
  private readonly leadJobs = new Counter({
    name: 'masthead_lead_jobs_total',
    help: 'Lead jobs that reached a final status on this instance (completed, failed, rejected)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  private readonly leadJobSeconds = new Histogram({
    name: 'masthead_lead_job_duration_seconds',
    help: 'From a lead job created to its final status, by status',
    labelNames: ['status'] as const,
    buckets: SLOW_BUCKETS,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'masthead_rate_limit_refusals_total',
    help: 'Requests refused with 429 by a limit of the lead API, by reason (requests_per_minute, monthly_quota)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Stopped by close(): a monitor left enabled would keep sampling after the app closed. */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });

  constructor(poolStats: () => PoolStats | undefined) {
    this.loopDelay.enable();
    const delay = this.loopDelay;
    // prom-client's names (nodejs_eventloop_lag_*), so that the usual Node.js dashboards read them; reset every scrape.
    const lag = (suffix: string, help: string, read: () => number, reset = false) =>
      new Gauge({
        name: `nodejs_eventloop_lag_${suffix}seconds`,
        help,
        registers: [this.registry],
        collect() {
          this.set(read() / 1e9);
          if (reset) delay.reset();
        },
      });
    lag('min_', 'The minimum event loop delay since the last scrape.', () => delay.min);
    lag('mean_', 'The mean event loop delay since the last scrape.', () => delay.mean);
    lag('p50_', 'The median event loop delay since the last scrape.', () => delay.percentile(50));
    lag('p90_', 'The 90th percentile of the event loop delay since the last scrape.', () => delay.percentile(90));
    lag('p99_', 'The 99th percentile of the event loop delay since the last scrape.', () => delay.percentile(99));
    // Registered last, so collected last: the others read the samples before it resets them.
    lag('max_', 'The maximum event loop delay since the last scrape.', () => delay.max, true);
    if (poolStats()) {
      new Gauge({
        name: 'masthead_db_pool_connections',
        help: 'PostgreSQL connections of this instance, by state (in_use, idle)',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = poolStats();
          if (!stats) return;
          this.set({ state: 'in_use' }, stats.total - stats.idle);
          this.set({ state: 'idle' }, stats.idle);
        },
      });
      new Gauge({
        name: 'masthead_db_pool_waiting_queries',
        help: 'Queries waiting for a PostgreSQL connection of this instance',
        registers: [this.registry],
        collect() {
          this.set(poolStats()?.waiting ?? 0);
        },
      });
      new Gauge({
        name: 'masthead_db_pool_max_connections',
        help: 'DATABASE_POOL_SIZE: the connections this instance keeps at most',
        registers: [this.registry],
        collect() {
          this.set(poolStats()?.max ?? 0);
        },
      });
    }
  }

  request(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status };
    this.requests.inc(labels);
    this.requestSeconds.observe(labels, seconds);
  }

  feedSynchronized(outcome: FeedSyncOutcome, seconds: number): void {
    this.feedSyncs.inc({ outcome });
    this.feedSyncSeconds.observe({ outcome }, seconds);
  }

  leadJobEnded(status: LeadJobEnd, seconds: number): void {
    this.leadJobs.inc({ status });
    this.leadJobSeconds.observe({ status }, Math.max(0, seconds));
  }

  refused(reason: RefusalReason): void {
    this.refusals.inc({ reason });
  }

  close(): void {
    this.loopDelay.disable();
  }
}
