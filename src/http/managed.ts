import { Type } from '@sinclair/typebox';
import type { TriggerService } from '../integrations/managed/triggers.ts';
import { ConversationSnapshotSchema, snapshot } from '../runtime/snapshot.ts';
import { MessageBody, parseMessage, SnapshotQuery } from './conversations.ts';
import type { TypedApp } from './typed-app.ts';

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
        summary: 'Create a trigger (409 when the intent has one)',
        body: BotTriggerSchema,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await triggers.create(request.body, request.caller);
      return reply.code(200).send();
    },
  );

  app.get(
    '/bottriggerstore/bottriggers',
    {
      config: { access: { roles: 'read' } },
      schema: { tags, summary: 'Every trigger', response: { 200: Type.Array(BotTriggerSchema) } },
    },
    async () => triggers.list(),
  );

  app.get(
    '/bottriggerstore/bottriggers/:intent',
    {
      config: { access: { roles: 'read' } },
      schema: { tags, summary: 'Read a trigger', params: IntentParams, response: { 200: BotTriggerSchema } },
    },
    async (request) => triggers.get(request.params.intent),
  );

  app.put(
    '/bottriggerstore/bottriggers/:intent',
    {
      config: { access: { roles: 'write', rule: 'referenced agents need USE' } },
      schema: {
        tags,
        summary: 'Create or replace the trigger of an intent',
        params: IntentParams,
        body: BotTriggerSchema,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      await triggers.replace(request.params.intent, request.body, request.caller);
      return reply.code(200).send();
    },
  );

  app.delete(
    '/bottriggerstore/bottriggers/:intent',
    {
      config: { access: { roles: 'write' } },
      schema: { tags, summary: 'Delete a trigger', params: IntentParams, response: { 200: { type: 'null' } } },
    },
    async (request, reply) => {
      await triggers.delete(request.params.intent);
      return reply.code(200).send();
    },
  );

  app.get(
    '/managedbots/:intent/:userId',
    {
      config: { access: { roles: 'converse', rule: 'userId must be the caller' } },
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
      config: { access: { roles: 'converse', rule: 'userId must be the caller' } },
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
      config: { access: { roles: 'converse', rule: 'userId must be the caller' } },
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
