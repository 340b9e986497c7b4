import { type TSchema, Type } from '@sinclair/typebox';

/** Largest id or number the storage holds (int4 on PostgreSQL). */
export const MAX_INT = 2_147_483_647;

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Id = Type.Integer({ minimum: 1, maximum: MAX_INT });

/** A publication's app id: the address of its API and pages (the publications service holds new ones to it). */
export const APP_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

export const AppIdParams = Type.Object({
  app_id: Type.String({ pattern: APP_ID_PATTERN, maxLength: 64, description: 'App ID of the publication' }),
});

export const AppIdAndIdParams = Type.Object({
  app_id: AppIdParams.properties.app_id,
  id: Id,
});

export const PageNumber = Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'page number, from 1' });

export const OrderDir = Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' });

export const PerPage = Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'records per page (1-100)' });

export const PageEnvelope = <T extends TSchema>(record: T) =>
  Type.Object({
    total: Type.Integer(),
    page: Type.Integer(),
    per_page: Type.Integer(),
    pages: Type.Integer(),
    records: Type.Array(record),
  });

export function pageEnvelope<T>(records: T[], total: number, page: number, perPage: number) {
  return { total, page, per_page: perPage, pages: Math.ceil(total / perPage), records };
}

/** Error responses for the OpenAPI document; every one has the shared error body. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string }> {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref('ErrorBody')]));
}

export const NoContent = Type.Null({ description: 'No content' });
