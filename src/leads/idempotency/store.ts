import { createHash } from 'node:crypto';
import { AppError, conflict } from '../../errors.js';
import { nowIso } from '../../time.js';
import type { IdempotencyQueries } from './queries.js';

const KEEP_MS = 24 * 60 * 60 * 1000;
/**
 * A request holding a key shows it is alive every RENEW_MS while it runs, however long it waits (for an account slot,
 * a slow site, an LLM and its retries). A key in progress not renewed for ABANDONED_MS — four renewals missed — was
 * left by a process that died (or lost its database that long), so the client's retry takes it over rather than
 * meeting a 409 until the key expires. A live request is never taken over, however long it runs.
 */
export const IDEMPOTENCY_RENEW_MS = 30_000;
export const IDEMPOTENCY_ABANDONED_MS = 4 * IDEMPOTENCY_RENEW_MS;
const KEY = /^[\x21-\x7e]{1,255}$/;

/** The answer kept for a key: what the first request was answered, replayed as it was. */
export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

/**
 * Idempotency-Key as Stripe has it: the first response to a key is kept for 24 hours and replayed for the same
 * request; the same key with another request, or while the first is still running, is a 409. A key whose request
 * stopped showing signs of life (its process died) is taken over by the same request.
 */
export class IdempotencyStore {
  constructor(private readonly queries: IdempotencyQueries) {}

  /**
   * The answer to `request` under `key`: the stored one when the key was answered already (`replayed`), else
   * `respond`'s, stored for the key's replays. While `respond` runs the key is held (a retry meets a 409); if it
   * throws, the key is freed, so that the client's retry runs the request again.
   */
  async respond(
    accountId: number,
    key: string,
    request: unknown,
    respond: () => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    const replay = await this.begin(accountId, validKey(key), hashRequest(request));
    if (replay) return { ...replay, replayed: true };
    // While this request runs, it shows the key is still in hand (a key left by a process that died is taken over).
    const holding = this.hold(accountId, key);
    let response: StoredResponse;
    try {
      response = await respond();
    } catch (error) {
      holding.stop();
      await this.queries.deleteInProgress(accountId, key);
      throw error;
    }
    holding.stop();
    await this.queries.complete(accountId, key, response.statusCode, JSON.stringify(response.body));
    return { ...response, replayed: false };
  }

  /** Claims the key for this request, or returns the response to replay. */
  private async begin(accountId: number, key: string, requestHash: string): Promise<StoredResponse | undefined> {
    const now = nowIso();
    const row = {
      account_id: accountId,
      key,
      request_hash: requestHash,
      status_code: null,
      response: null,
      created_at: now,
      expires_at: new Date(Date.now() + KEEP_MS).toISOString(),
    };
    if (await this.queries.insertIfAbsent(row)) return undefined;

    const existing = await this.queries.find(accountId, key);
    if (!existing || existing.expires_at <= now) {
      // Expired (or removed a moment ago): the key starts afresh. Only one of two racing requests takes it over.
      if (await this.queries.restartExpired(accountId, key, { request_hash: requestHash, created_at: now, expires_at: row.expires_at }, now))
        return undefined;
      if (!existing) return this.begin(accountId, key, requestHash);
      throw conflict('A request with this Idempotency-Key is being processed; retry when it has finished');
    }
    if (existing.request_hash !== requestHash) {
      throw conflict('This Idempotency-Key was already used with a different request; use a new key for a new request');
    }
    if (existing.status_code === null || existing.response === null) {
      if (await this.takeOverAbandoned(accountId, key, existing.renewed_at ?? existing.created_at)) return undefined;
      throw conflict('A request with this Idempotency-Key is being processed; retry when it has finished');
    }
    return { statusCode: existing.status_code, body: JSON.parse(existing.response) };
  }

  /**
   * Takes over a key in progress whose request last showed life at `lastSign`, if that is longer ago than
   * IDEMPOTENCY_ABANDONED_MS. The update checks the sign it saw, so only one of two racing retries takes it.
   */
  private async takeOverAbandoned(accountId: number, key: string, lastSign: string): Promise<boolean> {
    if (Date.parse(lastSign) > Date.now() - IDEMPOTENCY_ABANDONED_MS) return false;
    return this.queries.takeOver(accountId, key, lastSign, nowIso());
  }

  /** Renews a key in progress every IDEMPOTENCY_RENEW_MS until `stop` is called (when its request has an answer). */
  private hold(accountId: number, key: string): { stop(): void } {
    const timer = setInterval(() => {
      this.queries
        .renew(accountId, key, nowIso())
        // A failed renewal only makes a takeover possible sooner; the request goes on.
        .catch(() => undefined);
    }, IDEMPOTENCY_RENEW_MS);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  async deleteExpired(): Promise<void> {
    await this.queries.deleteExpired(nowIso());
  }
}

function validKey(key: string): string {
  if (!KEY.test(key)) throw new AppError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  return key;
}

function hashRequest(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}
