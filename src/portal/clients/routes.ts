import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../accounts/api-key-hook.js';
import { NoContent, PageNumber, errorResponses, pageEnvelope } from '../../http/schemas.js';
import type { RequestContext } from '../audit/service.js';
import { BecomeResult, Client, ClientCreate, ClientIdParams, ClientPage, ClientPageQuery, ClientUpdate } from './schemas.js';
import type { ClientService } from './service.js';

const tags = ['Clients'];

function contextOf(request: FastifyRequest): RequestContext {
  return { principal: principalOf(request), ip: request.ip ?? null };
}

export const clientRoutes: FastifyPluginAsyncTypebox<{ clients: ClientService }> = async (app, { clients }) => {
  // The spec names the collection `/clients/`; `/clients` answers the same (hidden from the OpenAPI document).
  for (const path of ['/clients/', '/clients']) {
    const hide = path === '/clients';
    app.get(
      path,
      {
        schema: {
          hide,
          tags,
          summary: "The first page of the account's clients (owners and admins)",
          description:
            'Takes the same query parameters as the page endpoint. The owner sees every client; an admin only the clients it manages: ' +
            'those holding at least one role, every one of them below admin and on a publication it administers.',
          querystring: ClientPageQuery,
          response: { 200: ClientPage, ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => {
        const { records, total, perPage } = await clients.page(principalOf(request), 1, request.query);
        return pageEnvelope(records, total, 1, perPage);
      },
    );

    app.post(
      path,
      {
        schema: {
          hide,
          tags,
          summary: 'Create a client, optionally with roles',
          description:
            'The email must be unused across the service (409 otherwise); the password needs at least 10 characters and must not be the email. ' +
            'Admins may grant roles only on publications they administer, and never the admin level; they create clients with at least one role ' +
            "(a client without roles is the owner's alone).",
          body: ClientCreate,
          response: { 201: Type.Ref(Client), ...errorResponses(400, 401, 403, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await clients.create(contextOf(request), request.body);
        return reply.code(201).send(created);
      },
    );
  }

  app.get(
    '/clients/page/:page',
    {
      schema: {
        tags,
        summary: 'A page of clients, optionally filtered by name or email, or by a publication they hold a role on',
        params: Type.Object({ page: PageNumber }),
        querystring: ClientPageQuery,
        response: { 200: ClientPage, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { records, total, perPage } = await clients.page(principalOf(request), request.params.page, request.query);
      return pageEnvelope(records, total, request.params.page, perPage);
    },
  );

  app.get(
    '/clients/:id',
    {
      schema: {
        tags,
        summary: 'One client',
        description: 'A client the caller does not manage (for an admin: any but those whose every role is below admin on its publications) is 404.',
        params: ClientIdParams,
        response: { 200: Type.Ref(Client), ...errorResponses(400, 401, 403, 404) },
      },
    },
    (request) => clients.get(principalOf(request), request.params.id),
  );

  app.put(
    '/clients/:id',
    {
      schema: {
        tags,
        summary: 'Update a client',
        description:
          'Only the fields sent change. A new password needs password_confirmation and ends every session of the client (its API keys keep working). ' +
          "Roles, when sent, replace all of the client's roles. A client the caller does not manage is 404.",
        params: ClientIdParams,
        body: ClientUpdate,
        response: { 200: Type.Ref(Client), ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    (request) => clients.update(contextOf(request), request.params.id, request.body),
  );

  app.delete(
    '/clients/:id',
    {
      schema: {
        tags,
        summary: 'Delete a client',
        description:
          "The client's keys stop working at once; the articles it wrote stay, without an author. A client the caller does not manage is 404.",
        params: ClientIdParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await clients.remove(contextOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/clients/:id/become',
    {
      schema: {
        tags,
        summary: 'Act as the client: a key that acts as it for one hour',
        description:
          'The key is marked with the caller as impersonator and every use of it is logged so. Owners may become any client; ' +
          'admins only the clients they manage (404 for others). The key works only while its issuer may still become the client: ' +
          'it stops at once when the issuer is demoted, loses the publication or is deleted, or the client gains a role beyond its reach. ' +
          'A key from become cannot become anyone. Recorded in the audit log.',
        params: ClientIdParams,
        response: { 200: BecomeResult, ...errorResponses(400, 401, 403, 404) },
      },
    },
    (request) => clients.become(contextOf(request), request.params.id),
  );
};
