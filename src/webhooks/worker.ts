import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { PollLoop } from '../infra/poll-loop.js';
import { FetchError, type SafeFetcher } from '../net/safe-fetch.js';
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookQueries } from './queries.js';
import { signedHeaders } from './signing.js';

/**
 * When a failed delivery is tried again, after its first attempt: about a day and a half in all, as Svix does
 * (each delay ±20 %, so that many deliveries failing together do not come back together).
 */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];
/** An attempt's whole request, the answer included. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** Of an answer, only this much is read (a short excerpt of a refusal is kept in the log); the rest is dropped. */
const RESPONSE_BYTES = 4 * 1024;
const EXCERPT_CHARACTERS = 200;
/** How long a claim holds a delivery: well past the request's deadline, so only a stopped instance lets it lapse. */
const LEASE_MS = 60_000;
const DAY_MS = 24 * 3_600_000;
/** Ended deliveries are kept this long in the log, then deleted (hourly). */
export const DELIVERY_LOG_DAYS = 30;
const PRUNE_EVERY_MS = 3_600_000;

export interface WebhookWorkerLog {
  debug(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface WebhookWorkerDeps {
  queries: WebhookQueries;
  /** The SSRF-guarded fetcher (private addresses only through OUTBOUND_ALLOW). */
  fetcher: SafeFetcher;
  log: WebhookWorkerLog;
  pollMs: number;
  /** An endpoint whose attempts have all failed for this many days is disabled. */
  disableAfterDays: number;
  /** Deliveries sent at once by this instance (also the size of each claim). */
  concurrency?: number;
  /** The jitter's random source (tests fix it). */
  random?: () => number;
}

/**
 * Sends the queued deliveries. The database is the queue: each pass leases the due deliveries (FOR UPDATE SKIP
 * LOCKED on PostgreSQL), so that with several instances each attempt is made by one of them, and records each attempt
 * only while its lease holds. Started and stopped with the app; tests drive it with runDue(now).
 */
export class WebhookWorker {
  private pruner: NodeJS.Timeout | undefined;
  private readonly loop: PollLoop;
  private readonly concurrency: number;
  private readonly random: () => number;

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.concurrency = deps.concurrency ?? 8;
    this.random = deps.random ?? Math.random;
    this.loop = new PollLoop({
      pass: () => this.runDue(),
      intervalMs: deps.pollMs,
      onError: (error) => this.deps.log.error({ err: error }, 'webhook worker pass failed'),
    });
  }

  /**
   * Makes every attempt due at `now` (the scheduling clock; tests move it ahead) until none is due, `concurrency` at
   * a time: a slot freed by one attempt is filled by the next claim, so one slow endpoint holds one slot, not a batch.
   * A delivery is tried at most once per call (a failed attempt's next one lies after `now`). Returns the number of
   * attempts made here.
   */
  async runDue(now: Date = new Date()): Promise<number> {
    let attempts = 0;
    const inFlight = new Set<Promise<void>>();
    try {
      while (!this.loop.stopping) {
        const room = this.concurrency - inFlight.size;
        const claimed = room > 0 ? await this.claim(now, room) : [];
        for (const { delivery, endpoint, owner } of claimed) {
          const run = this.attempt(delivery, endpoint, owner, now)
            .then(() => {
              attempts += 1;
            })
            .catch((error: unknown) => {
              // Only the database failing lands here: the lease lapses and a later pass tries again.
              this.deps.log.error({ err: error, delivery_id: delivery.id }, 'a webhook attempt could not be recorded');
            })
            .finally(() => inFlight.delete(run));
          inFlight.add(run);
        }
        if (inFlight.size === 0) break;
        if (claimed.length === 0 || inFlight.size >= this.concurrency) await Promise.race(inFlight);
      }
    } finally {
      // Attempts in hand end (and are recorded) before the pass does, even when a claim failed.
      await Promise.all(inFlight);
    }
    return attempts;
  }

  /** Leases up to `limit` due deliveries to a fresh claim, with their endpoints. */
  private async claim(now: Date, limit: number) {
    const clock = new Date(Math.max(now.getTime(), Date.now()));
    const owner = randomUUID();
    const claimed = await this.deps.queries.claimDue(owner, now.toISOString(), new Date(clock.getTime() + LEASE_MS).toISOString(), limit);
    if (claimed.length === 0) return [];
    const endpoints = new Map((await this.deps.queries.endpointsByIds([...new Set(claimed.map((d) => d.endpoint_id))])).map((e) => [e.id, e]));
    return claimed.flatMap((delivery) => {
      const endpoint = endpoints.get(delivery.endpoint_id);
      return endpoint ? [{ delivery, endpoint, owner }] : [];
    });
  }

  /** Deletes the deliveries that ended more than DELIVERY_LOG_DAYS before `now` (attempts included). */
  async prune(now: Date = new Date()): Promise<number> {
    return this.deps.queries.deleteEndedBefore(new Date(now.getTime() - DELIVERY_LOG_DAYS * DAY_MS).toISOString());
  }

  start(): void {
    if (this.pruner) return;
    this.loop.start();
    this.pruner = setInterval(
      () => this.prune().catch((error) => this.deps.log.warn({ err: error }, 'could not delete old webhook deliveries')),
      PRUNE_EVERY_MS,
    );
    this.pruner.unref();
  }

  /** Deliveries were queued here: a pass now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** Takes no new deliveries and waits for the attempts in flight (each bounded by its 15 s deadline). */
  async stop(): Promise<void> {
    clearInterval(this.pruner);
    this.pruner = undefined;
    await this.loop.stop();
  }

  private async attempt(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow, owner: string, now: Date): Promise<void> {
    // Signed with the real time: the receiver checks the timestamp against its own clock.
    const signedAt = new Date();
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret && endpoint.previous_secret_until && endpoint.previous_secret_until > signedAt.toISOString()) {
      secrets.push(endpoint.previous_secret);
    }
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const response = await this.deps.fetcher.fetch(endpoint.url, {
        method: 'POST',
        body: delivery.payload,
        headers: signedHeaders(delivery.event_id, signedAt, delivery.payload, secrets),
        timeoutMs: DELIVERY_TIMEOUT_MS,
        maxBytes: RESPONSE_BYTES,
        truncateBody: true,
        followRedirects: false,
      });
      statusCode = response.status;
      if (statusCode < 200 || statusCode > 299) error = refusal(statusCode, response.body);
    } catch (caught) {
      if (!(caught instanceof FetchError)) throw caught;
      error = caught.message;
    }
    const durationMs = Math.round(performance.now() - started);
    const succeeded = error === null;
    const clock = new Date(Math.max(now.getTime(), Date.now()));
    const round = delivery.round_attempts + 1;
    const delay = RETRY_DELAYS_MS[round - 1];
    const next = succeeded || delay === undefined ? null : new Date(clock.getTime() + delay * (0.8 + 0.4 * this.random())).toISOString();
    const days = this.deps.disableAfterDays;
    const result = await this.deps.queries.recordAttempt({
      deliveryId: delivery.id,
      endpointId: endpoint.id,
      owner,
      attemptedAt: clock.toISOString(),
      statusCode,
      durationMs,
      error,
      succeeded,
      delivery: { status: succeeded ? 'succeeded' : next === null ? 'failed' : 'pending', next_attempt_at: next },
      disableIfFailingSince: new Date(clock.getTime() - days * DAY_MS).toISOString(),
      disabledReason: `Disabled by Masthead: every delivery attempt failed for ${days} ${days === 1 ? 'day' : 'days'} (last: ${error ?? ''}). Fix the endpoint, then enable it again.`,
    });
    if (!result.recorded) {
      this.deps.log.warn({ delivery_id: delivery.id }, 'a webhook delivery was taken over by another claim; this attempt was not recorded');
    } else if (result.disabled) {
      this.deps.log.warn({ endpoint_id: endpoint.id, account_id: endpoint.account_id }, 'a webhook endpoint was disabled after failing for days');
    } else {
      this.deps.log.debug({ delivery_id: delivery.id, status_code: statusCode, error }, 'webhook attempt');
    }
  }
}

/** Why a non-2xx answer failed the attempt, with the start of what the endpoint said (as text, one line). */
function refusal(status: number, body: Buffer): string {
  const redirect = status >= 300 && status < 400 ? ' (redirects are not followed: give the final URL)' : '';
  const excerpt = body
    .toString('utf8')
    .replace(/[\u0000-\u001f\u007f\ufffd]+/g, ' ')
    .trim()
    .slice(0, EXCERPT_CHARACTERS);
  return `the endpoint answered HTTP ${status}${redirect}${excerpt ? `: ${excerpt}` : ''}`;
}
