import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TObject, Type } from '@sinclair/typebox';
import type { Principal } from '../accounts/service.js';
import { principalOf } from '../accounts/api-key-hook.js';
import { AppIdAndIdParams, AppIdParams, NoContent, errorResponses } from '../http/schemas.js';

/** The five operations of a small per-publication collection (categories, issues). */
export interface PublicationCollection<Row, CreateInput, UpdateInput> {
  list(principal: Principal, appId: string): Promise<Row[]>;
  get(principal: Principal, appId: string, id: number): Promise<Row>;
  create(principal: Principal, appId: string, input: CreateInput): Promise<Row>;
  update(principal: Principal, appId: string, id: number, input: UpdateInput): Promise<Row>;
  remove(principal: Principal, appId: string, id: number): Promise<void>;
}

interface CollectionRoutes<Row, CreateInput, UpdateInput> {
  /** The path segment, e.g. `categories`. */
  path: string;
  /** Singular name for summaries, e.g. `category`. */
  noun: string;
  service: PublicationCollection<Row, CreateInput, UpdateInput>;
  record: TObject;
  createBody: TObject;
  updateBody: TObject;
  present(row: Row): Record<string, unknown>;
}

/** GET list, GET one, POST, PUT and DELETE under `/{path}/:app_id`, with the portal's conventions. */
export function registerCollectionRoutes<Row, CreateInput, UpdateInput>(
  app: FastifyInstance,
  options: CollectionRoutes<Row, CreateInput, UpdateInput>,
): void {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const { path, noun, service, present } = options;
  const tags = [path[0]!.toUpperCase() + path.slice(1)];
  const record = Type.Ref(options.record);

  typed.get(
    `/${path}/:app_id`,
    {
      schema: {
        tags,
        summary: `List the ${path} of a publication`,
        params: AppIdParams,
        response: { 200: Type.Array(record), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => (await service.list(principalOf(request), request.params.app_id)).map(present),
  );
  typed.get(
    `/${path}/:app_id/:id`,
    { schema: { tags, summary: `One ${noun}`, params: AppIdAndIdParams, response: { 200: record, ...errorResponses(400, 401, 404) } } },
    async (request) => present(await service.get(principalOf(request), request.params.app_id, request.params.id)),
  );
  typed.post(
    `/${path}/:app_id`,
    {
      schema: {
        tags,
        summary: `Create a ${noun}`,
        params: AppIdParams,
        body: options.createBody,
        response: { 201: record, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const row = await service.create(principalOf(request), request.params.app_id, request.body as CreateInput);
      return reply.code(201).send(present(row));
    },
  );
  typed.put(
    `/${path}/:app_id/:id`,
    {
      schema: {
        tags,
        summary: `Update a ${noun}`,
        params: AppIdAndIdParams,
        body: options.updateBody,
        response: { 200: record, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => present(await service.update(principalOf(request), request.params.app_id, request.params.id, request.body as UpdateInput)),
  );
  typed.delete(
    `/${path}/:app_id/:id`,
    { schema: { tags, summary: `Delete a ${noun}`, params: AppIdAndIdParams, response: { 204: NoContent, ...errorResponses(400, 401, 403, 404) } } },
    async (request, reply) => {
      await service.remove(principalOf(request), request.params.app_id, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
