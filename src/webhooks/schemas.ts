import { Type } from '@sinclair/typebox';
import { Id, Nullable } from '../http/schemas.js';
import { MAX_URL_LENGTH } from '../net/safe-fetch.js';
import { WEBHOOK_EVENT_TYPES } from './events.js';
import { MAX_DESCRIPTION_LENGTH } from './service.js';

const EventType = Type.Union(
  WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: WEBHOOK_EVENT_TYPES.join(', ') },
);
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const EndpointBody = Type.Object({
  url: Type.String({ maxLength: MAX_URL_LENGTH, description: 'https URL of a public host that receives the events (POST, JSON)' }),
  description: Type.Optional(Nullable(Type.String({ maxLength: MAX_DESCRIPTION_LENGTH }))),
  events: Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, description: 'the event types it receives' }),
  enabled: Type.Optional(Type.Boolean({ default: true })),
});

export const EndpointPatch = Type.Partial(EndpointBody);

export const Endpoint = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: 'why Masthead disabled it (its deliveries failed for days); null otherwise' })),
  disabled_at: Nullable(Type.String()),
  failing_since: Nullable(Type.String({ description: 'since when every attempt has failed; null after a success' })),
  created_at: Type.String({ description: 'ISO 8601' }),
  updated_at: Type.String({ description: 'ISO 8601' }),
});

export const EndpointWithSecret = Type.Composite([
  Endpoint,
  Type.Object({ secret: Type.String({ description: 'the signing secret (whsec_…), shown this once' }) }),
]);

export const EndpointList = Type.Object({ endpoints: Type.Array(Endpoint) });

export const EndpointParams = Type.Object({ id: Id });
export const DeliveryParams = Type.Object({ id: Id, deliveryId: Id });

export const Delivery = Type.Object({
  id: Type.Integer(),
  event_id: Type.String({ description: 'the webhook-id header: the same for every endpoint and every attempt of one event' }),
  event_type: Type.String(),
  status: Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status))),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Type.String({ description: 'when a pending delivery is tried next' })),
  last_attempt_at: Nullable(Type.String()),
  last_status_code: Nullable(Type.Integer({ description: "the endpoint's HTTP status at the last attempt" })),
  last_duration_ms: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  created_at: Type.String(),
  delivered_at: Nullable(Type.String()),
});

export const DeliveryDetail = Type.Composite([
  Delivery,
  Type.Object({
    payload: Type.Object({ type: Type.String(), timestamp: Type.String(), data: Type.Unknown() }),
    attempt_log: Type.Array(
      Type.Object({
        attempted_at: Type.String(),
        status_code: Nullable(Type.Integer()),
        duration_ms: Type.Integer(),
        error: Nullable(Type.String()),
        succeeded: Type.Boolean(),
      }),
    ),
  }),
]);

export const DeliveriesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'deliveries per page (1-100)' }),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  status: Type.Optional(Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status)))),
});

export const DeliveriesPage = Type.Object({
  deliveries: Type.Array(Delivery),
  pagination: Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), pages: Type.Integer() }),
});
