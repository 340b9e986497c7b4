// Standard Webhooks signatures (https://www.standardwebhooks.com/): HMAC-SHA256 over `id.timestamp.body`, keyed by
// the endpoint's secret in the spec's `whsec_` base64 form, computed by the `standardwebhooks` package.

import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: inside the spec's 24 to 64. */
const SECRET_BYTES = 32;

export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** An event's id (the webhook-id header), unique per event; receivers use it to ignore a delivery they already had. */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString('hex')}`;
}

/**
 * The headers of one attempt: `webhook-signature` holds a `v1,` signature per secret (during a rotation the old
 * secret signs too, so a receiver that has not switched yet still verifies), separated by spaces.
 */
export function signedHeaders(eventId: string, at: Date, payload: string, secrets: string[]): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, at, payload)).join(' '),
  };
}
