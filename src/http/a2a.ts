import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { notFound } from '../errors.ts';
import { notExposed, type A2AService } from '../integrations/a2a/a2a-service.ts';
import type { Settings } from '../settings.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Agent-to-agent discovery and tasks: `GET /.well-known/agent.json` (the oldest exposed agent's card; also at
 * `/.well-known/agent-card.json`),
 * `GET /a2a/agents/<id>/agent.json`, `GET /a2a/agents` (roster), `GET /.well-known/capabilities[/skills]`
 * (404 unless published by settings) and `POST /a2a/agents/<id>` (JSON-RPC 2.0; errors are JSON-RPC errors with
 * status 200, an agent that is not exposed is a 404 problem).
 */

const AgentParams = Type.Object({ agentId: Type.String() });
const Card = {
  description: 'An A2A agent card (v0.3 JSON shape with the older authentication block)',
  type: 'object',
  additionalProperties: true,
} as const;
const tags = ['a2a'];

/** `svc.public-url` when set, else the scheme and host the request came with. */
function publicBase(settings: Settings, request: FastifyRequest): string {
  const configured = settings['svc.public-url'];
  return configured ? configured.replace(/\/+$/, '') : `${request.protocol}://${request.host}`;
}

export async function a2aRoutes(app: TypedApp, deps: { a2a: A2AService; settings: Settings }): Promise<void> {
  const { a2a, settings } = deps;

  // `agent-card.json` is where A2A 0.3+ clients (e.g. @a2a-js/sdk's createFromUrl) look by default.
  for (const url of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
    app.get(
      url,
      {
        config: { access: { roles: 'public' } },
        schema: {
          tags,
          summary: 'The default agent card: the card of the oldest exposed agent (404 when none is exposed)',
          response: { 200: Card },
        },
      },
      async (request) => {
        const card = await a2a.defaultCard(publicBase(settings, request));
        if (!card)
          throw notFound('No agent is exposed over agent-to-agent (a2aEnabled: true and deployed in production).');
        return card;
      },
    );
  }

  app.get(
    '/a2a/agents',
    {
      config: { access: { roles: 'authenticated' } },
      schema: {
        tags,
        summary: 'Cards of every exposed agent, oldest first',
        response: { 200: { type: 'array', items: Card } },
      },
    },
    async (request) => a2a.roster(publicBase(settings, request)),
  );

  app.get(
    '/a2a/agents/:agentId/agent.json',
    {
      config: { access: { roles: 'public' } },
      schema: { tags, summary: 'The card of one exposed agent', params: AgentParams, response: { 200: Card } },
    },
    async (request) => {
      const { agentId } = request.params;
      const card = await a2a.card(agentId, publicBase(settings, request));
      if (!card) throw notExposed(agentId);
      return card;
    },
  );

  const unpublished = () =>
    notFound('Capability discovery is not published (svc.a2a.capabilities.enabled and svc.a2a.capabilities.public).');
  app.get(
    '/.well-known/capabilities',
    {
      config: { access: { roles: 'public' } },
      schema: {
        tags,
        summary: 'Which exposed agent offers which skill (404 unless svc.a2a.capabilities.enabled and .public are on)',
        querystring: Type.Object(
          {
            skill: Type.Optional(Type.String({ description: 'only this skill (id or name, case-insensitive)' })),
            strategy: Type.Optional(Type.String({ description: '`highest_confidence` keeps the best match only' })),
          },
          { additionalProperties: true },
        ),
        response: { 200: { type: 'array', items: { type: 'object', additionalProperties: true } } },
      },
    },
    async (request) => {
      if (!a2a.capabilitiesPublished) throw unpublished();
      return a2a.capabilities(request.query);
    },
  );

  app.get(
    '/.well-known/capabilities/skills',
    {
      config: { access: { roles: 'public' } },
      schema: {
        tags,
        summary: 'Skill names of the exposed agents (same gating)',
        response: { 200: { type: 'array', items: { type: 'string' } } },
      },
    },
    async () => {
      if (!a2a.capabilitiesPublished) throw unpublished();
      return a2a.skills();
    },
  );

  // The task endpoint reads its body as text whatever the content type, so that malformed JSON is a JSON-RPC
  // parse error (-32700) rather than a 400 problem. The parser change stays inside this child context.
  await app.register(async (rpc: TypedApp) => {
    rpc.removeAllContentTypeParsers();
    rpc.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    rpc.post(
      '/a2a/agents/:agentId',
      {
        config: { access: { roles: 'converse', level: 'USE' } },
        schema: {
          tags,
          summary: 'JSON-RPC 2.0 task endpoint: message/send, tasks/send, tasks/get, tasks/cancel',
          description:
            'Errors are JSON-RPC errors with HTTP 200: -32700 parse, -32600 invalid request, -32601 unknown method, -32602 invalid params, -32001 task not found, -32004 unsupported operation.',
          params: AgentParams,
          response: { 200: { type: 'object', additionalProperties: true } },
        },
      },
      async (request) => {
        const { agentId } = request.params;
        const body = typeof request.body === 'string' ? request.body : '';
        return a2a.answer({ agentId, caller: request.caller?.principal.name }, body, request.caller);
      },
    );
  });
}
