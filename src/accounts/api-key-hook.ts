import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountService, Principal } from './service.js';
import { AppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthOptions {
  /** The portal also takes `Authorization: Bearer KEY`; the lead API takes `x-api-key` only, as its spec says. */
  allowBearer: boolean;
  /** A route parameter naming a publication (the portal's `app_id`): read with the key, in the same query. */
  publicationParam?: string;
}

/** An onRequest hook that admits a request only with a valid API key and records who it acts as. */
export function requireApiKey(accounts: AccountService, options: AuthOptions) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = presentedKey(request, options);
    if (!key) throw new AppError('unauthorized', 'Send an API key in the x-api-key header');
    const appId = options.publicationParam
      ? (request.params as Record<string, string | undefined> | undefined)?.[options.publicationParam]
      : undefined;
    const principal = await accounts.authenticate(key, appId);
    if (!principal) throw new AppError('unauthorized', 'The API key is unknown, revoked or expired');
    request.principal = principal;
    if (principal.impersonatorId !== null) {
      // Every request made with a key from "become" is logged with who is behind it.
      const log = request.log.child({ impersonator_id: principal.impersonatorId });
      request.log = log;
      reply.log = log;
    }
  };
}

function presentedKey(request: FastifyRequest, options: AuthOptions): string | undefined {
  const header = request.headers['x-api-key'];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (apiKey) return apiKey.trim();
  if (!options.allowBearer) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

/** The caller of an authenticated route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'Send an API key in the x-api-key header');
  return request.principal;
}
