import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AccountService } from '../../accounts/service.js';
import {
  FAILURE_WINDOW_MS,
  MAX_FAILURES_PER_EMAIL,
  MAX_FAILURES_PER_IP,
  SESSION_TTL_MS,
  type SessionService,
  WRONG_CREDENTIALS,
} from '../../accounts/sessions.js';
import { principalOf, requireApiKey } from '../../accounts/api-key-hook.js';
import { NoContent, errorResponses } from '../../http/schemas.js';

const tags = ['Sessions'];

const SignIn = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

const SessionUser = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  firstname: Type.String(),
  lastname: Type.String(),
  kind: Type.Union([Type.Literal('owner'), Type.Literal('client')]),
  account_id: Type.Integer(),
});

const Session = Type.Object({
  user: SessionUser,
  api_key: Type.String({ description: 'a session key: send it as x-api-key or Authorization: Bearer; shown only here' }),
  expires_at: Type.String({ description: 'when the key stops working, YYYY-MM-DD HH:MM:SS UTC' }),
});

export interface SessionRouteOptions {
  sessions: SessionService;
  accounts: AccountService;
}

/**
 * Signing in and out, mounted beside the portal's authenticated routes (under the same prefix): signing in is the
 * one portal route that takes no API key, so it cannot live in the scope whose hook demands one.
 */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRouteOptions> = async (app, { sessions, accounts }) => {
  const hours = SESSION_TTL_MS / 3_600_000;
  const minutes = FAILURE_WINDOW_MS / 60_000;

  app.post(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'Sign in with an email and password for a session key',
        description:
          `Needs no API key. Returns a key of kind session that acts as the user and expires after ${hours} hours. ` +
          `A wrong email or password is 401 with the same message ("${WRONG_CREDENTIALS}") whether or not the email exists. ` +
          `Failures are counted per email and per IP over ${minutes} minutes: from ${MAX_FAILURES_PER_EMAIL} failures for an email, ` +
          `or ${MAX_FAILURES_PER_IP} from an IP, every attempt (even with the right password) is 429 with Retry-After ` +
          '(seconds until the oldest counted failure leaves the window). Each attempt is counted atomically before its password ' +
          `is checked, so however many arrive at once, at most ${MAX_FAILURES_PER_EMAIL} per email and ${MAX_FAILURES_PER_IP} per IP ` +
          "are judged in a window (attempts still being judged count too). A successful sign-in is not counted, and clears the email's failures.",
        security: [],
        body: SignIn,
        response: { 201: Session, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const session = await sessions.signIn({ email: request.body.email, password: request.body.password, ip: request.ip });
      return reply.code(201).send(session);
    },
  );

  app.delete(
    '/sessions',
    {
      onRequest: requireApiKey(accounts, { allowBearer: true }),
      schema: {
        tags,
        summary: 'Sign out: revoke the session key this request is made with',
        description:
          'Send the session key that signing in returned; it stops working at once. ' +
          'Any other kind of key (an API key, an impersonation key) is refused with 400 validation_failed and stays valid.',
        response: { 204: NoContent, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      await sessions.signOut(principalOf(request));
      return reply.code(204).send(null);
    },
  );
};
