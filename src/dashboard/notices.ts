import type { FastifyRequest } from 'fastify';

/**
 * What a page says after a redirect (`?notice=key-revoked`): fixed texts chosen by a code, so that a link can
 * never make a page say something of its own.
 */
const NOTICES: Record<string, string> = {
  'signed-out': 'You are signed out.',
  'key-revoked': 'The key is revoked: requests made with it are refused from now on.',
  'password-changed': 'Your password is changed. Your other sessions are signed out.',
  'feed-added': 'The feed is added. Synchronize it to import its articles.',
  'feed-saved': 'The feed settings are saved.',
  'feed-deleted': 'The feed is deleted; the articles it imported stay.',
  'role-saved': "The client's role is saved.",
  'role-removed': 'The client no longer holds a role on this publication.',
  'client-created': 'The client is created with its role on this publication.',
  'template-created': 'The template is saved.',
  'template-saved': 'The template is saved.',
  'template-deleted': 'The template is deleted. Jobs made with it keep their emails.',
  'template-default': 'This is now the account’s default template: leads that name no template use it.',
  'sender-saved': 'The email sender is saved. New emails are signed this way.',
  'lead-queued': 'The lead is accepted: this page follows its job.',
  'batch-queued': 'The batch is queued: this page follows its jobs as they run.',
  'webhook-enabled': 'The endpoint is enabled: its waiting deliveries are sent again.',
  'webhook-disabled': 'The endpoint is disabled: it receives nothing until you enable it. Its waiting deliveries wait.',
  'webhook-deleted': 'The endpoint and its delivery log are deleted.',
  'webhook-test-queued': 'A test event is on its way: its delivery is at the top of the log below (reload to see its answer).',
  'delivery-queued': 'The delivery is sent again now (reload to see its answer).',
};

export function noticeOf(request: FastifyRequest): string | undefined {
  const code = (request.query as Record<string, unknown> | undefined)?.notice;
  return typeof code === 'string' ? NOTICES[code] : undefined;
}
