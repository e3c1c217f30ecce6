import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ChannelService } from '../channels/channel-service.ts';
import { facebook, messengerMessages, parsedJson, slack, slackDelivery } from '../channels/platforms.ts';
import { facebookSignatureValid, sameSecret, slackSignatureValid } from '../channels/signatures.ts';
import { AppError, invalid } from '../errors.ts';
import { CHANNEL_MESSAGE_STATES } from '../storage/channel-message-ports.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Messaging-channel webhooks (issue 18): Facebook Messenger at `/channels/facebook/<agentId>` (the original's
 * path) and the Slack Events API at `/channels/slack/<agentId>`. They are public — the platforms do not hold our
 * tokens — and trust a request only when its signature made with the channel's secret is right. Their bodies are
 * read raw, because the signature covers the exact bytes.
 */

const tags = ['channels'];
const AgentParams = Type.Object({ agentId: Type.String() });

const badSignature = () =>
  new AppError('forbidden', 'The request signature is missing or does not match the channel secret.');

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const ChannelMessageSchema = Type.Object(
  {
    id: Type.String(),
    platform: Type.String(),
    messageKey: Type.String({ description: "the platform's message id" }),
    senderKey: Type.String({ description: 'Messenger: the sender; Slack: channel and thread' }),
    input: Type.String(),
    receivedOn: Type.Number(),
    state: Type.Union(
      CHANNEL_MESSAGE_STATES.map((state) => Type.Literal(state)),
      { description: 'PENDING (persisted, acknowledged), PROCESSING, DONE (answered), FAILED (see detail)' },
    ),
    finishedOn: Type.Optional(Type.Number()),
    conversationId: Type.Optional(Type.String()),
    detail: Type.Optional(Type.String()),
  },
  { title: 'ChannelMessage' },
);

export async function channelRoutes(app: TypedApp, deps: { channels: ChannelService; slackWindowSeconds: number }) {
  const { channels } = deps;

  app.get(
    '/channels/:agentId/messages',
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: "The latest messages the agent's channels received (at most 100, newest first)",
        params: AgentParams,
        response: { 200: Type.Array(ChannelMessageSchema) },
      },
    },
    async (request) => channels.list(request.params.agentId, request.caller),
  );

  app.get(
    '/channels/facebook/:agentId',
    {
      config: { access: { roles: 'public', rule: 'the hub.verify_token must be the channel verificationToken' } },
      schema: {
        tags,
        summary: 'Messenger webhook verification: answers hub.challenge when hub.verify_token is right',
        params: AgentParams,
        querystring: Type.Object({
          'hub.mode': Type.Optional(Type.String()),
          'hub.verify_token': Type.Optional(Type.String()),
          'hub.challenge': Type.Optional(Type.String()),
        }),
      },
    },
    async (request, reply) => {
      const config = await channels.config(facebook, request.params.agentId);
      const { 'hub.mode': mode, 'hub.verify_token': token, 'hub.challenge': challenge } = request.query;
      if (mode !== 'subscribe' || challenge === undefined)
        throw invalid('A verification request has hub.mode=subscribe and a hub.challenge.');
      if (token === undefined || !sameSecret(config.verificationToken!, token))
        throw new AppError('forbidden', 'hub.verify_token does not match the channel verificationToken.');
      return reply.type('text/plain; charset=utf-8').send(challenge);
    },
  );

  // The webhooks read their bodies as bytes; the parser change stays inside this child context.
  await app.register(async (hooks: TypedApp) => {
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    hooks.post(
      '/channels/facebook/:agentId',
      {
        config: { access: { roles: 'public', rule: 'X-Hub-Signature-256 (or X-Hub-Signature) signed with appSecret' } },
        schema: {
          tags,
          summary: 'Messenger webhook: messages are persisted, acknowledged, then answered through the Send API',
          params: AgentParams,
        },
      },
      async (request, reply) => {
        const { agentId } = request.params;
        const config = await channels.config(facebook, agentId);
        const raw = rawBody(request.body);
        const signed = { sha256: header(request, 'x-hub-signature-256'), sha1: header(request, 'x-hub-signature') };
        if (!facebookSignatureValid(raw, signed, config.appSecret!)) throw badSignature();
        await channels.accept(facebook, agentId, messengerMessages(parsedJson(raw.toString('utf8'))));
        return reply.type('text/plain; charset=utf-8').send('EVENT_RECEIVED');
      },
    );

    hooks.post(
      '/channels/slack/:agentId',
      {
        config: {
          access: {
            roles: 'public',
            rule: 'X-Slack-Signature signed with signingSecret, X-Slack-Request-Timestamp within the window',
          },
        },
        schema: {
          tags,
          summary:
            'Slack Events API and interactivity: url_verification; messages and quick-reply button taps persisted, acknowledged, then answered in their thread',
          params: AgentParams,
        },
      },
      async (request, reply) => {
        const { agentId } = request.params;
        const config = await channels.config(slack, agentId);
        const raw = rawBody(request.body);
        const signed = {
          timestamp: header(request, 'x-slack-request-timestamp'),
          signature: header(request, 'x-slack-signature'),
        };
        if (!slackSignatureValid(raw, signed, config.signingSecret!, Date.now(), deps.slackWindowSeconds))
          throw badSignature();
        const delivery = slackDelivery(raw.toString('utf8'), header(request, 'content-type'));
        if (delivery.kind === 'url_verification') return reply.send({ challenge: delivery.challenge });
        await channels.accept(slack, agentId, delivery.messages);
        return reply.code(200).send();
      },
    );
  });
}

function rawBody(body: unknown): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.alloc(0);
}
