import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Nullable } from '../../http/schemas.js';
import { registerCollectionRoutes } from '../collection-routes.js';
import { type IssueService, presentIssue } from './service.js';

export const Issue = Type.Object(
  {
    id: Type.Integer(),
    publication_id: Type.Integer(),
    name: Type.String(),
    date: Nullable(Type.String({ description: 'release date, YYYY-MM-DD HH:MM:SS UTC' })),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'Issue' },
);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const DateInput = Nullable(Type.String({ maxLength: 40, description: 'YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or ISO 8601' }));

export function registerIssueRoutes(app: FastifyInstance, issues: IssueService): void {
  registerCollectionRoutes(app, {
    path: 'issues',
    noun: 'issue',
    service: issues,
    record: Issue,
    createBody: Type.Object({ name: Name, date: Type.Optional(DateInput) }),
    updateBody: Type.Object({ name: Type.Optional(Name), date: Type.Optional(DateInput) }),
    present: presentIssue,
  });
}
