import { Type } from '@sinclair/typebox';
import type { ApiKeyService } from '../security/api-keys.ts';
import type { TypedApp } from './typed-app.ts';

/** API keys of the OpenAI-compatible API (admins only): create (the key is shown once), list, revoke. */

const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    agents: Type.Array(Type.String(), { description: "agent ids the key may use ('*' = every agent)" }),
    createdOn: Type.Integer({ description: 'epoch milliseconds' }),
    createdBy: Type.String(),
    revokedOn: Type.Optional(Type.Integer({ description: 'epoch milliseconds; a revoked key is refused' })),
  },
  { title: 'ApiKey' },
);

export async function apiKeyRoutes(app: TypedApp, deps: { apiKeys: ApiKeyService }): Promise<void> {
  const { apiKeys } = deps;
  const tags = ['API keys'];

  app.post(
    '/administration/apikeys',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Create an API key for the OpenAI-compatible API (the answer is the only place the key is shown)',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            agents: Type.Array(Type.String({ minLength: 1 }), {
              minItems: 1,
              description: "agent ids the key may use ('*' = every agent)",
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Composite([ApiKeySchema, Type.Object({ key: Type.String({ description: 'shown once' }) })]),
        },
      },
    },
    async (request, reply) => {
      const { name, agents } = request.body;
      const created = await apiKeys.create(name, agents, request.caller?.principal.name ?? 'anonymous');
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/administration/apikeys',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'The API keys (never the keys themselves)',
        response: { 200: Type.Array(ApiKeySchema) },
      },
    },
    async () => apiKeys.list(),
  );

  app.delete(
    '/administration/apikeys/:id',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Revoke an API key (refused from then on; within 5 s on other instances)',
        params: Type.Object({ id: Type.String() }),
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await apiKeys.revoke(request.params.id);
      return reply.code(200).send();
    },
  );
}
