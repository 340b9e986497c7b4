// The events an account's webhook endpoints can take, and the body every delivery carries ({type, timestamp, data},
// as Standard Webhooks recommends).

/** Lead jobs ending, a lead batch finishing, and the portal's feed synchronizations. */
export const WEBHOOK_EVENT_TYPES = ['job.completed', 'job.failed', 'job.rejected', 'batch.completed', 'feed.synchronized', 'feed.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What "send a test event" sends; no endpoint subscribes to it, each receives it only when asked. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'job.completed': 'a lead job wrote its email',
  'job.failed': 'a lead job failed',
  'job.rejected': 'a lead was refused (not a business address)',
  'batch.completed': 'every lead of a batch ended',
  'feed.synchronized': 'an RSS feed was synchronized (with its counts)',
  'feed.failed': 'an RSS feed synchronization failed (with the error)',
};

export function isEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

export interface WebhookPayload {
  type: WebhookEventType | typeof TEST_EVENT_TYPE;
  /** ISO 8601, when the event happened. */
  timestamp: string;
  data: unknown;
}

/** A feed synchronization as its events tell it (the portal's runner hands it over once the run is recorded). */
export interface FeedSyncEvent {
  publicationId: number;
  feed: { id: number; url: string; title: string };
  result: {
    job_id: string;
    job_status: string;
    imported: number;
    updated: number;
    skipped: number;
    unchanged: number;
    failed: number;
    not_modified: boolean;
    errors: string[];
  };
}

/** The type and data of a feed synchronization's event: feed.synchronized with the counts, feed.failed with the error. */
export function feedEvent(event: FeedSyncEvent, appId: string): { type: WebhookEventType; data: Record<string, unknown> } {
  const { result } = event;
  const base = { app_id: appId, feed: event.feed, job_id: result.job_id };
  if (result.job_status === 'failed') return { type: 'feed.failed', data: { ...base, error: result.errors[0] ?? 'the synchronization failed' } };
  return {
    type: 'feed.synchronized',
    data: {
      ...base,
      imported: result.imported,
      updated: result.updated,
      skipped: result.skipped,
      unchanged: result.unchanged,
      failed: result.failed,
      not_modified: result.not_modified,
    },
  };
}
