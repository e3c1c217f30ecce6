import { Type } from '@sinclair/typebox';
import { PROVIDER_TYPES } from '../llm/providers.ts';
import { AgentSetupService } from '../runtime/agent-setup.ts';
import type { DeploymentService } from '../runtime/deployments.ts';
import type { ResourceService } from '../resources/service.ts';
import type { Vault } from '../security/vault.ts';
import type { TypedApp } from './typed-app.ts';

/** `POST /administration/agents/setup`: an LLM agent in one request, as the original service's 6.x wizard builds it. */

const text = (description: string) => Type.Optional(Type.String({ maxLength: 100_000, description }));

const SetupBody = Type.Object(
  {
    agentName: Type.String({ maxLength: 200, description: 'name of the agent and of every resource made for it' }),
    systemPrompt: Type.String({ maxLength: 100_000, description: "the model's system message" }),
    provider: text(`LLM provider (default openai): ${PROVIDER_TYPES.join(', ')}`),
    model: text('model name'),
    apiKey: text(
      'API key (not needed for ollama); kept in the vault when one is configured, the configuration holding a ${vault:...} reference',
    ),
    baseUrl: text("the provider's base URL, when not its default"),
    introMessage: text('shown when a conversation starts; none when empty'),
    deploy: Type.Optional(Type.Boolean({ default: true, description: 'deploy the agent at once' })),
    environment: text('production (default) or test'),
    enableBuiltInTools: Type.Optional(
      Type.Boolean({ default: false, description: 'offer the built-in tools to the model (agent mode)' }),
    ),
    builtInToolsWhitelist: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), {
        maxItems: 50,
        description: 'with enableBuiltInTools: only these built-in tools (default all)',
      }),
    ),
    enableQuickReplies: Type.Optional(
      Type.Boolean({ default: false, description: 'not available here: true is refused (400)' }),
    ),
    enableSentimentAnalysis: Type.Optional(
      Type.Boolean({ default: false, description: 'not available here: true is refused (400)' }),
    ),
    mcpServerUrls: Type.Optional(
      Type.Array(Type.String({ maxLength: 2000 }), {
        maxItems: 50,
        description: 'not available here (no MCP client yet): a non-empty list is refused (400)',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Fields of the original wizard not listed here (vaultKeyName, hitlConfig, ...) are refused (400).',
  },
);

const SetupResultSchema = Type.Object(
  {
    action: Type.Literal('setup_complete'),
    agentId: Type.String(),
    agentName: Type.String(),
    provider: Type.String(),
    model: Type.String(),
    deployed: Type.Boolean(),
    deploymentStatus: Type.String({ description: 'READY, ERROR, ... or NOT_DEPLOYED when deploy was false' }),
    resources: Type.Record(Type.String(), Type.String(), { description: 'the created resources (svc:// references)' }),
  },
  { title: 'SetupResult' },
);

export async function agentSetupRoutes(
  app: TypedApp,
  deps: { resources: ResourceService; deployments: DeploymentService; vault: Vault },
): Promise<void> {
  const setup = new AgentSetupService(deps);
  app.post(
    '/administration/agents/setup',
    {
      config: { access: { roles: 'write' } },
      schema: {
        tags: ['deployment'],
        summary: 'Create (and deploy) an LLM agent in one request',
        description:
          "Creates the behavior rules, the LLM configuration, an output set for the intro message, a workflow and the agent, each named agentName, then deploys the agent unless deploy is false (the deployment's outcome is in deploymentStatus). Called by the original service's Agent Father through an HTTP call. Nothing is created when the request is refused (400).",
        body: SetupBody,
        response: { 201: SetupResultSchema },
      },
    },
    async (request, reply) => {
      const result = await setup.setup(request.body, request.caller);
      request.log.info({ agentId: result.agentId }, 'set up an agent');
      return reply.code(201).header('Location', result.resources.agentLocation!).send(result);
    },
  );
}
