import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { registerCollectionRoutes } from '../collection-routes.js';
import { type CategoryService, presentCategory } from './service.js';

export const Category = Type.Object(
  {
    id: Type.Integer(),
    publication_id: Type.Integer(),
    name: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'Category' },
);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

export function registerCategoryRoutes(app: FastifyInstance, categories: CategoryService): void {
  registerCollectionRoutes(app, {
    path: 'categories',
    noun: 'category',
    service: categories,
    record: Category,
    createBody: Type.Object({ name: Name }),
    updateBody: Type.Object({ name: Type.Optional(Name) }),
    present: presentCategory,
  });
}
