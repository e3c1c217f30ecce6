import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.ts';
import type { CallerAccess } from '../security/access.ts';
import { MEMORY_CATEGORIES, MEMORY_VISIBILITIES } from '../storage/user-memory-ports.ts';
import type { UserMemoryService } from '../user-memory/service.ts';
import type { UserDataService } from '../user-memory/user-data.ts';
import { ConversationSnapshotSchema } from '../runtime/snapshot.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Persistent user memory (`/usermemorystore/memories`, the original's paths) and a user's whole data
 * (`/admin/gdpr/{userId}`: export and erasure of memories, long-term properties and conversations). While access
 * checks apply, a caller reaches only their own memories (admins: everyone's); the user-data routes are admins'.
 */

const literals = (names: readonly string[], description: string) =>
  Type.Union(
    names.map((name) => Type.Literal(name)),
    { description },
  );
const Category = literals(MEMORY_CATEGORIES, MEMORY_CATEGORIES.join(' | '));
const Visibility = literals(
  MEMORY_VISIBILITIES,
  'self: only the agent that wrote it; group: also the agents of the group discussions in groupIds; global: every agent of the user',
);

const MemoryEntrySchema = Type.Object(
  {
    id: Type.String(),
    userId: Type.String(),
    key: Type.String(),
    value: Type.Unknown({ description: 'any JSON value (the memory tools write text)' }),
    category: Category,
    visibility: Visibility,
    sourceAgentId: Type.Optional(Type.String({ description: 'the agent that wrote it' })),
    groupIds: Type.Array(Type.String()),
    sourceConversationId: Type.Optional(Type.String()),
    accessCount: Type.Integer({ description: 'how often a recall handed it to a model' }),
    createdAt: Type.Integer({ description: 'epoch milliseconds' }),
    updatedAt: Type.Integer({ description: 'epoch milliseconds of the last write' }),
  },
  { title: 'UserMemoryEntry' },
);
const EntryList = Type.Array(MemoryEntrySchema);

const MemoryWriteSchema = Type.Object(
  {
    userId: Type.String({ minLength: 1 }),
    key: Type.String({ minLength: 1, maxLength: 255 }),
    value: Type.Unknown({ description: 'any JSON value, at most 64 KiB as JSON' }),
    category: Type.Optional(Category),
    visibility: Visibility,
    sourceAgentId: Type.Optional(Type.String({ description: 'required for self and group entries' })),
    groupIds: Type.Optional(Type.Array(Type.String(), { description: 'required for group entries' })),
    sourceConversationId: Type.Optional(Type.String()),
  },
  { additionalProperties: false, title: 'UserMemoryWrite' },
);

const UserParams = Type.Object({ userId: Type.String({ minLength: 1 }) });
const EntryParams = Type.Object({ userId: Type.String({ minLength: 1 }), entryId: Type.String({ minLength: 1 }) });
const ListQuery = Type.Object(
  {
    category: Type.Optional(Category),
    visibility: Type.Optional(Visibility),
    key: Type.Optional(Type.String({ description: 'entries under this key' })),
    agentId: Type.Optional(Type.String({ description: 'entries this agent wrote' })),
    q: Type.Optional(Type.String({ description: 'every word in the key or the value' })),
  },
  { additionalProperties: false },
);
const VisibleQuery = Type.Object(
  {
    agentId: Type.Optional(
      Type.String({ minLength: 1, description: 'the agent that would read; without it, what every agent sees' }),
    ),
    groupId: Type.Optional(Type.String({ description: 'the group discussion it would read in' })),
    order: Type.Optional(
      Type.Union([Type.Literal('most_recent'), Type.Literal('most_accessed')], { description: 'default most_recent' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 50 }),
  },
  { additionalProperties: false },
);

const UserDataSchema = Type.Object(
  {
    userId: Type.String(),
    exportedAt: Type.Integer({ description: 'epoch milliseconds' }),
    memories: EntryList,
    longTermProperties: Type.Record(Type.String(), Type.Unknown()),
    conversations: Type.Array(
      Type.Composite([
        ConversationSnapshotSchema,
        Type.Object({ createdOn: Type.Integer(), lastModifiedOn: Type.Integer() }),
      ]),
    ),
  },
  { title: 'UserData' },
);

/** While checks apply, a caller reaches only their own memories. */
function requireOwnData(caller: CallerAccess | undefined, userId: string): void {
  if (!caller?.restricted || caller.principal.name === userId) return;
  throw new AppError(
    'forbidden',
    `${caller.principal.name} may only reach their own memories, not those of '${userId}'.`,
  );
}

function downloadName(userId: string, what: string): string {
  return `${what}-${userId.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 100)}.json`;
}

export async function userMemoryRoutes(
  app: TypedApp,
  deps: { memories: UserMemoryService; userData: UserDataService },
): Promise<void> {
  const { memories, userData } = deps;
  const tags = ['User memory'];
  const own = { roles: 'conversation-read', rule: 'own memories only' } as const;
  const ownWrite = { roles: 'converse', rule: 'own memories only' } as const;

  app.get(
    '/usermemorystore/memories',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'The users with memory entries, by user id',
        querystring: Type.Object(
          {
            index: Type.Integer({ minimum: 0, default: 0 }),
            limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Array(
            Type.Object({ userId: Type.String(), entries: Type.Integer(), lastUpdatedAt: Type.Integer() }),
          ),
        },
      },
    },
    async (request) => memories.users(request.query.index, request.query.limit),
  );

  app.put(
    '/usermemorystore/memories',
    {
      config: { access: { roles: 'write', rule: 'own memories only' } },
      schema: {
        tags,
        summary: 'Insert or replace a memory entry (same user, key and owning agent; global entries have no owner)',
        body: MemoryWriteSchema,
        response: { 200: MemoryEntrySchema },
      },
    },
    async (request) => {
      requireOwnData(request.caller, request.body.userId);
      return memories.put(request.body);
    },
  );

  app.get(
    '/usermemorystore/memories/:userId',
    {
      config: { access: own },
      schema: {
        tags,
        summary: "A user's memory entries, newest first, optionally filtered",
        params: UserParams,
        querystring: ListQuery,
        response: { 200: EntryList },
      },
    },
    async (request) => {
      const { userId } = request.params;
      requireOwnData(request.caller, userId);
      const { category, visibility, key, agentId, q } = request.query;
      return memories.list(userId, { category, visibility, key, sourceAgentId: agentId, query: q });
    },
  );

  app.get(
    '/usermemorystore/memories/:userId/visible',
    {
      config: { access: own },
      schema: {
        tags,
        summary: 'The entries an agent (in a group discussion) would recall for the user',
        params: UserParams,
        querystring: VisibleQuery,
        response: { 200: EntryList },
      },
    },
    async (request) => {
      const { userId } = request.params;
      requireOwnData(request.caller, userId);
      const { agentId, groupId, order, limit } = request.query;
      // No agent: only what every agent of the user sees (an agent id is never empty).
      return memories.visible({ userId, agentId: agentId ?? '', groupId }, order ?? 'most_recent', limit);
    },
  );

  const filtered = (
    path: string,
    summary: string,
    params: typeof UserParams | ReturnType<typeof Type.Object>,
    filterOf: (params: Record<string, string>) => Parameters<UserMemoryService['list']>[1],
    querystring?: ReturnType<typeof Type.Object>,
  ) =>
    app.get(
      path,
      {
        config: { access: own },
        schema: { tags, summary, params, ...(querystring ? { querystring } : {}), response: { 200: EntryList } },
      },
      async (request) => {
        const values = { ...(request.params as Record<string, string>), ...(request.query as Record<string, string>) };
        requireOwnData(request.caller, values.userId!);
        return memories.list(values.userId!, filterOf(values));
      },
    );
  filtered(
    '/usermemorystore/memories/:userId/search',
    'Entries with every word of q in the key or the value',
    UserParams,
    (values) => ({ query: values.q }),
    Type.Object({ q: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  );
  filtered(
    '/usermemorystore/memories/:userId/category/:category',
    'Entries of one category',
    Type.Object({ userId: Type.String({ minLength: 1 }), category: Category }),
    (values) => ({ category: values.category }),
  );
  filtered(
    '/usermemorystore/memories/:userId/key/:key',
    'Entries under one key (the global one and those of single agents)',
    Type.Object({ userId: Type.String({ minLength: 1 }), key: Type.String({ minLength: 1 }) }),
    (values) => ({ key: values.key }),
  );

  app.get(
    '/usermemorystore/memories/:userId/count',
    {
      config: { access: own },
      schema: { tags, summary: 'How many entries the user has', params: UserParams, response: { 200: Type.Integer() } },
    },
    async (request) => {
      requireOwnData(request.caller, request.params.userId);
      return (await memories.list(request.params.userId)).length;
    },
  );

  app.get(
    '/usermemorystore/memories/:userId/export',
    {
      config: { access: own },
      schema: {
        tags,
        summary: "Download a user's memory entries as a JSON file",
        params: UserParams,
        response: {
          200: Type.Object({ userId: Type.String(), exportedAt: Type.Integer(), memories: EntryList }),
        },
      },
    },
    async (request, reply) => {
      const { userId } = request.params;
      requireOwnData(request.caller, userId);
      return reply
        .header('Content-Disposition', `attachment; filename="${downloadName(userId, 'memories')}"`)
        .send({ userId, exportedAt: Date.now(), memories: await memories.list(userId) });
    },
  );

  app.get(
    '/usermemorystore/memories/:userId/entries/:entryId',
    {
      config: { access: own },
      schema: { tags, summary: 'One memory entry', params: EntryParams, response: { 200: MemoryEntrySchema } },
    },
    async (request) => {
      requireOwnData(request.caller, request.params.userId);
      return memories.get(request.params.userId, request.params.entryId);
    },
  );

  app.delete(
    '/usermemorystore/memories/:userId/entries/:entryId',
    {
      config: { access: ownWrite },
      schema: { tags, summary: 'Delete one memory entry', params: EntryParams, response: { 200: { type: 'null' } } },
    },
    async (request, reply) => {
      requireOwnData(request.caller, request.params.userId);
      await memories.delete(request.params.userId, request.params.entryId);
      return reply.code(200).send();
    },
  );

  app.delete(
    '/usermemorystore/memories/entry/:entryId',
    {
      config: { access: ownWrite },
      schema: {
        tags,
        summary: 'Delete one memory entry by its id alone (the original service’s path)',
        params: Type.Object({ entryId: Type.String({ minLength: 1 }) }),
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      const entry = await memories.find(request.params.entryId);
      if (entry === undefined || (request.caller?.restricted && entry.userId !== request.caller.principal.name))
        throw new AppError('not-found', `No memory entry ${request.params.entryId}.`);
      await memories.delete(entry.userId, entry.id);
      return reply.code(200).send();
    },
  );

  app.delete(
    '/usermemorystore/memories/:userId',
    {
      config: { access: ownWrite },
      schema: {
        tags,
        summary: "Erase every memory entry of a user (the whole user's data: DELETE /admin/gdpr/{userId})",
        params: UserParams,
        response: { 200: Type.Object({ deleted: Type.Integer() }) },
      },
    },
    async (request) => {
      requireOwnData(request.caller, request.params.userId);
      return { deleted: await memories.deleteAll(request.params.userId) };
    },
  );

  app.get(
    '/admin/gdpr/:userId',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Everything kept about a user as one JSON file: memory entries, long-term properties, conversations',
        params: UserParams,
        response: { 200: UserDataSchema },
      },
    },
    async (request, reply) =>
      reply
        .header('Content-Disposition', `attachment; filename="${downloadName(request.params.userId, 'user-data')}"`)
        .send(await userData.export(request.params.userId)),
  );

  app.delete(
    '/admin/gdpr/:userId',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Erase everything kept about a user: memory entries, long-term properties, conversations',
        params: UserParams,
        response: {
          200: Type.Object({
            userId: Type.String(),
            memories: Type.Integer(),
            longTermProperties: Type.Integer(),
            conversations: Type.Integer(),
          }),
        },
      },
    },
    async (request) => userData.erase(request.params.userId),
  );
}
