import { type Static, Type } from '@sinclair/typebox';
import { Id, Nullable, OrderDir, PageEnvelope, PerPage } from '../../http/schemas.js';
import { CLIENT_ACCESS_LEVELS } from '../permissions.js';

export const CLIENT_ORDER_FIELDS = ['id', 'email', 'firstname', 'lastname', 'created_at', 'updated_at', 'last_seen_at', 'sign_in_count'] as const;
export type ClientOrderField = (typeof CLIENT_ORDER_FIELDS)[number];
export const MAX_ROLES = 1000;

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Email = Type.String({ minLength: 3, maxLength: 320, description: 'unique across the service, case-insensitive' });
const Password = Type.String({
  maxLength: 1024,
  description: 'at least 10 characters, not the email; stored hashed, never returned',
});
const AccessLevel = Type.Union(
  CLIENT_ACCESS_LEVELS.map((level) => Type.Literal(level)),
  { description: CLIENT_ACCESS_LEVELS.join(', ') },
);

export const RoleInput = Type.Object({ publication_id: Id, access_level: AccessLevel });
export type RoleInputValue = Static<typeof RoleInput>;
const Roles = Type.Array(RoleInput, {
  maxItems: MAX_ROLES,
  description: "the client's roles, one per publication; when sent, they replace all of the client's roles",
});

export const Role = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  publication_id: Type.Integer(),
  access_level: Type.String({ description: CLIENT_ACCESS_LEVELS.join(', ') }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const Client = Type.Object(
  {
    id: Type.Integer(),
    firstname: Type.String(),
    lastname: Type.String(),
    email: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    last_seen_at: Nullable(Type.String({ description: 'when a key of the client was last used, YYYY-MM-DD HH:MM:SS UTC' })),
    sign_in_count: Type.Integer(),
    gravatar_url: Type.String({ description: 'protocol-relative Gravatar URL of the md5 of the lower-cased email' }),
    roles: Type.Array(Role),
  },
  { $id: 'Client', description: 'A sub-user of the account; the password is never part of it' },
);
export type ClientView = Static<typeof Client>;
export type RoleView = Static<typeof Role>;

export const ClientCreate = Type.Object({
  email: Email,
  firstname: Name,
  lastname: Name,
  password: Password,
  roles: Type.Optional(Roles),
});
export type ClientCreateInput = Static<typeof ClientCreate>;

export const ClientUpdate = Type.Object({
  firstname: Type.Optional(Name),
  lastname: Type.Optional(Name),
  password: Type.Optional(Password),
  password_confirmation: Type.Optional(Type.String({ maxLength: 1024, description: 'must equal password' })),
  roles: Type.Optional(Roles),
});
export type ClientUpdateInput = Static<typeof ClientUpdate>;

const OrderBy = Type.Union(
  CLIENT_ORDER_FIELDS.map((field) => Type.Literal(field)),
  { default: 'id', description: `one of ${CLIENT_ORDER_FIELDS.join(', ')}` },
);

export const ClientPageQuery = Type.Object({
  per_page: Type.Optional(PerPage),
  order_by: Type.Optional(OrderBy),
  order_dir: Type.Optional(OrderDir),
  filter: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive text found in the first name, last name or email' })),
  publication_id: Type.Optional(Id),
});
export type ClientPageOptions = Static<typeof ClientPageQuery>;

export const ClientPage = PageEnvelope(Type.Ref(Client));

export const ClientIdParams = Type.Object({ id: Id });

export const BecomeResult = Type.Object({
  client: Type.Ref(Client),
  api_key: Type.String({ description: 'acts as the client; shown once' }),
  expires_at: Type.String({ description: 'one hour after becoming, YYYY-MM-DD HH:MM:SS UTC' }),
});
