import type { Principal } from '../accounts/service.js';
import type { WebhookDeliveryStatus } from '../db/types.js';
import { conflict, type FieldProblem, forbidden, notFound, validationError } from '../errors.js';
import { AllowList, isIpLiteral, isPublicAddress } from '../net/address-policy.js';
import { MAX_URL_LENGTH } from '../net/safe-fetch.js';
import { nowIso } from '../time.js';
import { type FeedSyncEvent, feedEvent, isEventType, TEST_EVENT_TYPE, type WebhookEventType, type WebhookPayload } from './events.js';
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookQueries } from './queries.js';
import { newEventId, newSecret } from './signing.js';

/** Endpoints an account may have at most. */
export const MAX_ENDPOINTS = 20;
export const MAX_DESCRIPTION_LENGTH = 200;
/** After a rotation the old secret keeps signing this long, so receivers can switch without missing a delivery. */
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface EndpointInput {
  url: string;
  description?: string | null;
  events: string[];
  enabled?: boolean;
}

export type EndpointChanges = Partial<EndpointInput>;

export interface EndpointView {
  id: number;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  enabled: boolean;
  /** Set when Masthead disabled the endpoint (its deliveries failed for days); null when enabled or turned off by hand. */
  disabled_reason: string | null;
  disabled_at: string | null;
  /** Since when every attempt has failed; null after a success. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: number;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  /** Attempts made, every one (send again included). */
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface WebhookLog {
  warn(details: object, message: string): void;
}

export interface WebhookServiceDeps {
  queries: WebhookQueries;
  /** OUTBOUND_ALLOW: these host:port pairs may be private and plain http (local receivers in tests). */
  outboundAllow: readonly string[];
  log: WebhookLog;
  /** Told when deliveries were queued, so that this instance's worker sends them at once. */
  onQueued?: () => void;
}

/** Webhook endpoints of an account, their delivery log, and the events other domains publish. */
export class WebhookService {
  private readonly allow: AllowList;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.allow = new AllowList(deps.outboundAllow);
  }

  async list(principal: Principal): Promise<EndpointView[]> {
    assertOwner(principal);
    return (await this.deps.queries.listEndpoints(principal.accountId)).map(presentEndpoint);
  }

  async get(principal: Principal, id: number): Promise<EndpointView> {
    return presentEndpoint(await this.find(principal, id));
  }

  /** Endpoints Masthead disabled after days of failures (the dashboard tells the owner on every page). */
  async countDisabledByFailure(principal: Principal): Promise<number> {
    if (principal.kind !== 'owner') return 0;
    return this.deps.queries.countDisabledByFailure(principal.accountId);
  }

  /** Creates an endpoint; its signing secret is returned this once. */
  async create(principal: Principal, input: EndpointInput): Promise<{ endpoint: EndpointView; secret: string }> {
    assertOwner(principal);
    const values = this.checked(input);
    if ((await this.deps.queries.countEndpoints(principal.accountId)) >= MAX_ENDPOINTS) {
      throw conflict(`An account has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
    }
    const now = nowIso();
    const secret = newSecret();
    const row = await this.deps.queries.insertEndpoint({
      account_id: principal.accountId,
      url: values.url,
      description: values.description,
      events: JSON.stringify(values.events),
      enabled: input.enabled === false ? 0 : 1,
      secret,
      previous_secret: null,
      previous_secret_until: null,
      failing_since: null,
      disabled_reason: null,
      disabled_at: null,
      created_at: now,
      updated_at: now,
    });
    return { endpoint: presentEndpoint(row), secret };
  }

  /** Changes what is given; enabling an endpoint starts its health afresh (its waiting deliveries resume). */
  async update(principal: Principal, id: number, changes: EndpointChanges): Promise<EndpointView> {
    const current = await this.find(principal, id);
    const values = this.checked({
      url: changes.url ?? current.url,
      description: changes.description === undefined ? current.description : changes.description,
      events: changes.events ?? parseEvents(current.events),
    });
    const enable = changes.enabled === true && current.enabled === 0;
    const row = await this.deps.queries.updateEndpoint(principal.accountId, id, {
      url: values.url,
      description: values.description,
      events: JSON.stringify(values.events),
      ...(changes.enabled === undefined ? {} : { enabled: changes.enabled ? 1 : 0 }),
      ...(enable || changes.enabled === false ? { failing_since: null, disabled_reason: null, disabled_at: null } : {}),
      updated_at: nowIso(),
    });
    if (!row) throw notFound(`Webhook endpoint ${id}`);
    if (enable) this.deps.onQueued?.();
    return presentEndpoint(row);
  }

  async delete(principal: Principal, id: number): Promise<void> {
    assertOwner(principal);
    if (!(await this.deps.queries.deleteEndpoint(principal.accountId, id))) throw notFound(`Webhook endpoint ${id}`);
  }

  /** A new signing secret, returned this once; the old one still signs (beside it) for 24 hours. */
  async rotateSecret(principal: Principal, id: number): Promise<{ endpoint: EndpointView; secret: string }> {
    const current = await this.find(principal, id);
    const secret = newSecret();
    const now = new Date();
    const row = await this.deps.queries.updateEndpoint(principal.accountId, id, {
      secret,
      previous_secret: current.secret,
      previous_secret_until: new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(),
      updated_at: now.toISOString(),
    });
    if (!row) throw notFound(`Webhook endpoint ${id}`);
    return { endpoint: presentEndpoint(row), secret };
  }

  async listDeliveries(principal: Principal, endpointId: number, query: { limit: number; page: number; status?: WebhookDeliveryStatus }) {
    await this.find(principal, endpointId);
    const { total, deliveries } = await this.deps.queries.pageOfDeliveries(endpointId, {
      status: query.status,
      limit: query.limit,
      offset: (query.page - 1) * query.limit,
    });
    return {
      deliveries: deliveries.map(presentDelivery),
      pagination: { total, page: query.page, limit: query.limit, pages: Math.ceil(total / query.limit) },
    };
  }

  /** One delivery with the body it carries and each of its attempts. */
  async getDelivery(principal: Principal, endpointId: number, deliveryId: number) {
    await this.find(principal, endpointId);
    const delivery = await this.deps.queries.findDelivery(endpointId, deliveryId);
    if (!delivery) throw notFound(`Delivery ${deliveryId}`);
    const attempts = await this.deps.queries.attemptsOf(delivery.id);
    return {
      ...presentDelivery(delivery),
      payload: JSON.parse(delivery.payload) as WebhookPayload,
      attempt_log: attempts.map((attempt) => ({
        attempted_at: attempt.attempted_at,
        status_code: attempt.status_code,
        duration_ms: attempt.duration_ms,
        error: attempt.error,
        succeeded: attempt.succeeded === 1,
      })),
    };
  }

  /** Sends a `webhook.test` event to this endpoint alone (whatever events it takes). */
  async sendTest(principal: Principal, endpointId: number): Promise<DeliveryView> {
    const endpoint = await this.find(principal, endpointId);
    if (endpoint.enabled !== 1) throw conflict('The endpoint is disabled; enable it to send it a test event');
    const now = nowIso();
    const payload: WebhookPayload = {
      type: TEST_EVENT_TYPE,
      timestamp: now,
      data: { endpoint_id: endpoint.id, message: 'A test event from Masthead: your endpoint receives and verifies webhooks.' },
    };
    const eventId = newEventId();
    const delivery = await this.deps.queries.insertDelivery(deliveryRow(endpoint, eventId, TEST_EVENT_TYPE, JSON.stringify(payload), now));
    this.deps.onQueued?.();
    return presentDelivery(delivery);
  }

  /** Sends a delivery again (same event id and body), now, with a fresh retry schedule. */
  async retryDelivery(principal: Principal, endpointId: number, deliveryId: number): Promise<DeliveryView> {
    const endpoint = await this.find(principal, endpointId);
    if (endpoint.enabled !== 1) throw conflict('The endpoint is disabled; enable it to send deliveries again');
    const delivery = await this.deps.queries.findDelivery(endpointId, deliveryId);
    if (!delivery) throw notFound(`Delivery ${deliveryId}`);
    const now = nowIso();
    if (!(await this.deps.queries.requeueDelivery(endpointId, deliveryId, now, now))) {
      throw conflict('The delivery is being sent right now; try again in a moment');
    }
    this.deps.onQueued?.();
    return presentDelivery((await this.deps.queries.findDelivery(endpointId, deliveryId))!);
  }

  /**
   * Records an event for every enabled endpoint of the account that takes its type (one delivery each, under one
   * event id), for the worker to send. Called right after the change it tells of is stored. It never throws: an
   * event that cannot be recorded (the database is away) is logged, and the caller's work stands.
   */
  async publish(accountId: number, type: WebhookEventType, data: unknown): Promise<number> {
    try {
      const endpoints = (await this.deps.queries.listEndpoints(accountId)).filter(
        (endpoint) => endpoint.enabled === 1 && parseEvents(endpoint.events).includes(type),
      );
      if (endpoints.length === 0) return 0;
      const now = nowIso();
      const eventId = newEventId();
      const payload = JSON.stringify({ type, timestamp: now, data } satisfies WebhookPayload);
      await this.deps.queries.insertDeliveries(endpoints.map((endpoint) => deliveryRow(endpoint, eventId, type, payload, now)));
      this.deps.onQueued?.();
      return endpoints.length;
    } catch (error) {
      this.deps.log.warn({ err: error, account_id: accountId, event_type: type }, 'a webhook event could not be recorded');
      return 0;
    }
  }

  /** A feed synchronization's event, for the account of the feed's publication. Never throws (as publish). */
  async publishFeedSync(event: FeedSyncEvent): Promise<number> {
    try {
      const owner = await this.deps.queries.publicationOwner(event.publicationId);
      if (!owner) return 0;
      const { type, data } = feedEvent(event, owner.app_id);
      return await this.publish(owner.account_id, type, data);
    } catch (error) {
      this.deps.log.warn({ err: error, feed_id: event.feed.id }, 'a feed webhook event could not be recorded');
      return 0;
    }
  }

  private async find(principal: Principal, id: number): Promise<WebhookEndpointRow> {
    assertOwner(principal);
    const endpoint = await this.deps.queries.findEndpoint(principal.accountId, id);
    if (!endpoint) throw notFound(`Webhook endpoint ${id}`);
    return endpoint;
  }

  /** The input checked and normalized, or a 400 naming every problem. */
  private checked(input: EndpointInput): { url: string; description: string | null; events: WebhookEventType[] } {
    const problems: FieldProblem[] = [];
    const url = this.checkedUrl(input.url.trim(), problems);
    const description = input.description?.trim() || null;
    if (description !== null && [...description].length > MAX_DESCRIPTION_LENGTH) {
      problems.push({ path: '/description', message: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` });
    }
    const events = [...new Set(input.events)];
    if (events.length === 0) problems.push({ path: '/events', message: 'must name at least one event' });
    const unknown = events.find((event) => !isEventType(event));
    if (unknown !== undefined) problems.push({ path: '/events', message: `has an unknown event "${unknown.slice(0, 50)}"` });
    if (problems.length > 0) throw validationError(problems);
    return { url, description, events: events.filter(isEventType) };
  }

  /**
   * An https URL of a public host: no credentials, no fragment, no private or loopback address written as such (a
   * name that resolves to one is refused when a delivery connects). Plain http, and private addresses, only for a
   * host:port of OUTBOUND_ALLOW.
   */
  private checkedUrl(text: string, problems: FieldProblem[]): string {
    const problem = (message: string) => {
      problems.push({ path: '/url', message });
      return text;
    };
    if (text === '') return problem('must not be empty');
    if (text.length > MAX_URL_LENGTH) return problem(`must be at most ${MAX_URL_LENGTH} characters`);
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return problem('is not a valid URL');
    }
    const allowed = this.allow.hasUrl(url);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed)) return problem('must use https');
    if (url.username !== '' || url.password !== '') return problem('must not contain a user name or password');
    if (url.hash !== '') return problem('must not have a fragment (#…)');
    const host = url.hostname.toLowerCase();
    if (!allowed) {
      if (isIpLiteral(host) && !isPublicAddress(host)) return problem('must not point to a private, loopback or reserved address');
      if (!isIpLiteral(host) && (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')))
        return problem('must name a public host');
    }
    return url.href;
  }
}

function assertOwner(principal: Principal): void {
  if (principal.kind !== 'owner') throw forbidden('Webhooks belong to the account owner; portal client keys cannot manage them');
}

function parseEvents(text: string): WebhookEventType[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((value): value is WebhookEventType => typeof value === 'string' && isEventType(value)) : [];
  } catch {
    return [];
  }
}

function deliveryRow(endpoint: WebhookEndpointRow, eventId: string, type: string, payload: string, now: string) {
  return {
    endpoint_id: endpoint.id,
    account_id: endpoint.account_id,
    event_id: eventId,
    event_type: type,
    payload,
    status: 'pending' as const,
    attempts: 0,
    round_attempts: 0,
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    last_attempt_at: null,
    last_status_code: null,
    last_duration_ms: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
  };
}

export function presentEndpoint(row: WebhookEndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: parseEvents(row.events),
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at,
    failing_since: row.failing_since,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentDelivery(row: WebhookDeliveryRow): DeliveryView {
  return {
    id: Number(row.id),
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code,
    last_duration_ms: row.last_duration_ms,
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
  };
}
