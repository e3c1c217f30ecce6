import { Type } from '@sinclair/typebox';
import type { TriggerService } from '../integrations/managed/triggers.ts';
import { compileParameterValidator } from '../resources/validation.ts';
import { ConversationSnapshotSchema, snapshot } from '../runtime/snapshot.ts';
import { SpaceQuery } from './auth.ts';
import { MessageBody, parseMessage, SnapshotQuery } from './conversations.ts';
import type { TypedApp } from './typed-app.ts';
import { GrantSchema, StoredGrantSchema, VisibilityBody } from './workspaces.ts';

/** Bot triggers (`/bottriggerstore/bottriggers`) and managed conversations (`/managedbots/{intent}/{userId}`). */

// Documents the shape; `parseTrigger` checks it (also accepting upstream's agentDeployments/agentId).
const BotTriggerSchema = Type.Object(
  {
    intent: Type.Optional(
      Type.String({ description: 'keyword or phrase selecting the trigger; also its id (the path names it on PUT)' }),
    ),
    botDeployments: Type.Optional(
      Type.Array(
        Type.Object(
          {
            environment: Type.String({ default: 'production' }),
            botId: Type.String(),
            initialContext: Type.Optional(
              Type.Record(Type.String(), Type.Object({ type: Type.String(), value: Type.Unknown() }), {
                description: 'context of the first step only',
              }),
            ),
          },
          { additionalProperties: true },
        ),
        { description: 'one is picked at random for each new conversation' },
      ),
    ),
  },
  { title: 'BotTrigger', additionalProperties: true },
);

const IntentParams = Type.Object({ intent: Type.String() });
const TriggerAccessView = Type.Object(
  {
    intent: Type.String(),
    ownerId: Type.Optional(Type.String()),
    spaceId: Type.Optional(Type.String()),
    visibility: Type.String(),
    grants: Type.Array(StoredGrantSchema),
  },
  { title: 'TriggerAccess' },
);
const ManagedParams = Type.Object({ intent: Type.String(), userId: Type.String() });

export async function managedRoutes(app: TypedApp, deps: { triggers: TriggerService }): Promise<void> {
  const { triggers } = deps;
  const tags = ['managed agents'];

  app.post(
    '/bottriggerstore/bottriggers',
    {
      config: { access: { roles: 'write', rule: 'referenced agents need USE' } },
      schema: {
        tags,
        summary: 'Create a trigger (409 when the intent has one); the caller owns it',
        querystring: SpaceQuery,
        body: BotTriggerSchema,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await triggers.create(request.body, request.caller, request.query.space);
      return reply.code(200).send();
    },
  );

  app.get(
    '/bottriggerstore/bottriggers',
    {
      config: { access: { roles: 'read', rule: 'only the triggers the caller has a level on' } },
      schema: { tags, summary: 'Every trigger the caller may use', response: { 200: Type.Array(BotTriggerSchema) } },
    },
    async (request) => triggers.list(request.caller),
  );

  app.get(
    '/bottriggerstore/bottriggers/:intent',
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: { tags, summary: 'Read a trigger', params: IntentParams, response: { 200: BotTriggerSchema } },
    },
    async (request) => triggers.get(request.params.intent, request.caller),
  );

  app.put(
    '/bottriggerstore/bottriggers/:intent',
    {
      config: { access: { roles: 'write', level: 'EDIT', rule: 'referenced agents need USE' } },
      schema: {
        tags,
        summary: 'Create or replace the trigger of an intent',
        params: IntentParams,
        querystring: SpaceQuery,
        body: BotTriggerSchema,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await triggers.replace(request.params.intent, request.body, request.caller, request.query.space);
      return reply.code(200).send();
    },
  );

  app.delete(
    '/bottriggerstore/bottriggers/:intent',
    {
      config: { access: { roles: 'write', level: 'OWN' } },
      schema: { tags, summary: 'Delete a trigger', params: IntentParams, response: { 200: { type: 'null' } } },
    },
    async (request, reply) => {
      await triggers.delete(request.params.intent, request.caller);
      return reply.code(200).send();
    },
  );

  app.get(
    '/bottriggerstore/bottriggers/:intent/grants',
    {
      config: { access: { roles: 'read', level: 'OWN' } },
      schema: {
        tags,
        summary: 'Owner, space, visibility and grants of a trigger (owner level)',
        params: IntentParams,
        response: { 200: TriggerAccessView },
      },
    },
    async (request) => triggers.access(request.params.intent, request.caller),
  );

  app.put(
    '/bottriggerstore/bottriggers/:intent/grants',
    {
      config: { access: { roles: 'write', level: 'OWN' } },
      schema: {
        tags,
        summary: 'Replace the grant list of a trigger (owner level)',
        description: 'A principal named twice keeps its highest level; a grant to the owner is dropped.',
        params: IntentParams,
        body: Type.Array(GrantSchema, { maxItems: 1000 }),
        response: { 200: TriggerAccessView },
      },
      validatorCompiler: ({ schema, httpPart }) =>
        httpPart === 'body' ? () => true : compileParameterValidator(schema),
    },
    async (request) => triggers.setGrants(request.params.intent, request.body ?? null, request.caller),
  );

  app.put(
    '/bottriggerstore/bottriggers/:intent/visibility',
    {
      config: { access: { roles: 'write', level: 'OWN' } },
      schema: {
        tags,
        summary: 'Set who besides the grantees may use a trigger, and its space (owner level)',
        params: IntentParams,
        body: VisibilityBody,
        response: { 200: TriggerAccessView },
      },
    },
    async (request) => triggers.setVisibility(request.params.intent, request.body, request.caller),
  );

  app.get(
    '/managedbots/:intent/:userId',
    {
      config: { access: { roles: 'converse', level: 'USE', rule: 'userId must be the caller' } },
      schema: {
        tags,
        summary: "The user's conversation for the intent (started when there is none)",
        params: ManagedParams,
        querystring: SnapshotQuery,
        response: { 200: ConversationSnapshotSchema },
      },
    },
    async (request) => {
      const { intent, userId } = request.params;
      return snapshot(await triggers.conversation(intent, userId, request.caller), request.query);
    },
  );

  app.post(
    '/managedbots/:intent/:userId',
    {
      config: { access: { roles: 'converse', level: 'USE', rule: 'userId must be the caller' } },
      schema: {
        tags,
        summary: "Send a message to the user's conversation for the intent",
        params: ManagedParams,
        querystring: SnapshotQuery,
        body: Type.Optional(MessageBody),
        response: { 200: ConversationSnapshotSchema },
      },
    },
    async (request) => {
      const { intent, userId } = request.params;
      const conversation = await triggers.say(
        intent,
        userId,
        { ...parseMessage(request.body), caller: request.callerIdentity },
        request.caller,
      );
      return snapshot(conversation, request.query);
    },
  );

  app.post(
    '/managedbots/:intent/:userId/endConversation',
    {
      config: { access: { roles: 'converse', level: 'USE', rule: 'userId must be the caller' } },
      schema: {
        tags,
        summary: "End the user's conversation for the intent; the next message starts a new one",
        params: ManagedParams,
        body: Type.Optional(MessageBody),
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      const { intent, userId } = request.params;
      await triggers.end(intent, userId, request.caller);
      return reply.code(200).send();
    },
  );
}
