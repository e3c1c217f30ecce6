import { invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import { PROVIDER_TYPES } from '../llm/providers.ts';
import { kindNamed } from '../resources/kinds.ts';
import type { ResourceService } from '../resources/service.ts';
import type { CallerAccess } from '../security/access.ts';
import type { Vault } from '../security/vault.ts';
import { vaultReference } from '../security/vault-names.ts';
import { rawText } from '../templating/raw-text.ts';
import { type DeploymentService, normalizeEnvironment } from './deployments.ts';

/**
 * `POST /administration/agents/setup` (the original service's 6.x agent wizard, which its "Agent Father" agent calls
 * through an HTTP call): builds a working LLM agent in one request — a parser, a rule that sends every input to the
 * model, the LLM configuration, an output set for the optional intro message, a workflow and the agent, each named
 * after the agent — and deploys it unless `deploy` is false. Nothing is created when the request is refused.
 */

export interface SetupAgentRequest {
  readonly agentName: string;
  readonly systemPrompt: string;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly baseUrl?: string | undefined;
  readonly introMessage?: string | undefined;
  readonly deploy?: boolean | undefined;
  readonly environment?: string | undefined;
  /** Offer the built-in tools (agent mode), optionally only those named in `builtInToolsWhitelist`. */
  readonly enableBuiltInTools?: boolean | undefined;
  readonly builtInToolsWhitelist?: readonly string[] | undefined;
  /** Options of the original's wizard this service does not offer: refused when set (see `UNAVAILABLE_OPTIONS`). */
  readonly enableQuickReplies?: boolean | undefined;
  readonly enableSentimentAnalysis?: boolean | undefined;
  readonly mcpServerUrls?: readonly string[] | undefined;
}

export interface SetupResult {
  readonly action: 'setup_complete';
  readonly agentId: string;
  readonly agentName: string;
  readonly provider: string;
  readonly model: string;
  readonly deployed: boolean;
  readonly deploymentStatus: string;
  /** Where each created resource is (`svc://` references; never a secret). */
  readonly resources: Readonly<Record<string, string>>;
}

/** Providers that need no API key (local models, or cloud credentials from the environment). */
const KEYLESS_PROVIDERS: ReadonlySet<string> = new Set(['ollama', 'jlama', 'bedrock', 'oracle-genai']);

/**
 * Wizard options of the original that need what this service does not have: quick replies and sentiment make the
 * original's model answer a JSON object that its output building takes apart, and MCP server URLs need an MCP
 * client. A request that sets one (true, or a non-empty list) is refused rather than silently getting less.
 */
const UNAVAILABLE_OPTIONS = [
  ['enableQuickReplies', 'quick replies suggested by the model are'],
  ['enableSentimentAnalysis', 'sentiment analysis by the model is'],
  ['mcpServerUrls', 'the MCP client (tools from MCP servers) is'],
] as const;

function refuseUnavailable(request: SetupAgentRequest): void {
  for (const [option, feature] of UNAVAILABLE_OPTIONS) {
    const value = request[option];
    if (value === true || (Array.isArray(value) && value.length > 0)) {
      throw invalid(`'${option}' is not available here: ${feature} not supported by this service.`, { path: option });
    }
  }
}

/** The action the rule fires on every input and the LLM task answers. */
const SEND_MESSAGE = 'send_message';

/** A field the caller filled: templated bodies send `""` for what the conversation never asked. */
const filled = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

export class AgentSetupService {
  readonly #resources: ResourceService;
  readonly #deployments: DeploymentService;
  readonly #vault: Vault;

  constructor(deps: { resources: ResourceService; deployments: DeploymentService; vault: Vault }) {
    this.#resources = deps.resources;
    this.#deployments = deps.deployments;
    this.#vault = deps.vault;
  }

  async setup(request: SetupAgentRequest, caller: CallerAccess | undefined): Promise<SetupResult> {
    const agentName = filled(request.agentName);
    const systemPrompt = filled(request.systemPrompt);
    if (agentName === undefined) throw invalid("'agentName' is required.", { path: 'agentName' });
    if (systemPrompt === undefined) throw invalid("'systemPrompt' is required.", { path: 'systemPrompt' });
    const provider = (filled(request.provider) ?? 'openai').toLowerCase();
    if (!(PROVIDER_TYPES as readonly string[]).includes(provider)) {
      throw invalid(`Unknown provider '${provider}'; use one of ${PROVIDER_TYPES.join(', ')}.`, { path: 'provider' });
    }
    const model = filled(request.model);
    if (model === undefined) throw invalid("'model' is required.", { path: 'model' });
    const apiKey = filled(request.apiKey);
    if (apiKey === undefined && !KEYLESS_PROVIDERS.has(provider)) {
      throw invalid(`'apiKey' is required for the provider '${provider}'.`, { path: 'apiKey' });
    }
    const environment = normalizeEnvironment(request.environment);
    const baseUrl = filled(request.baseUrl);
    const introMessage = filled(request.introMessage);
    refuseUnavailable(request);

    // The prompt is the user's text, not a template: braces in it reach the model as written.
    const parameters: Record<string, string> = {
      modelName: model,
      systemMessage: rawText(systemPrompt),
      addToOutput: 'true',
    };
    if (baseUrl !== undefined) parameters.baseUrl = baseUrl;
    if (apiKey !== undefined) parameters.apiKey = apiKey;
    const bodies = {
      behavior: {
        behaviorGroups: [
          {
            name: 'Chat',
            behaviorRules: [
              {
                name: 'Send every message to the model',
                actions: [SEND_MESSAGE],
                conditions: [{ type: 'inputmatcher', configs: { expressions: '*' } }],
              },
            ],
          },
        ],
      },
      llm: {
        tasks: [
          {
            id: 'chat',
            type: provider,
            actions: [SEND_MESSAGE],
            parameters,
            ...(request.enableBuiltInTools === true
              ? {
                  enableBuiltInTools: true,
                  ...(request.builtInToolsWhitelist === undefined
                    ? {}
                    : { builtInToolsWhitelist: request.builtInToolsWhitelist }),
                }
              : {}),
          },
        ],
      },
      output:
        introMessage === undefined
          ? undefined
          : {
              outputSet: [
                {
                  action: 'CONVERSATION_START',
                  outputs: [{ valueAlternatives: [{ type: 'text', text: introMessage }] }],
                },
              ],
            },
    };
    // Refuse before anything exists: every body must be valid as it will be stored.
    this.#resources.validate(kindNamed('behavior'), bodies.behavior);
    this.#resources.validate(kindNamed('llm'), bodies.llm);
    if (bodies.output !== undefined) this.#resources.validate(kindNamed('output'), bodies.output);

    const created: Record<string, string> = {};
    const create = async (kind: string, body: unknown) => {
      const { id, uri } = await this.#resources.create(kind, body, caller?.origin(undefined) ?? {}, caller);
      await this.#resources.editDescriptor(id, { name: agentName }, undefined, caller);
      created[`${kind}Location`] = uri;
      return { id, uri };
    };
    if (apiKey !== undefined && this.#vault.enabled && !apiKey.startsWith('${vault:')) {
      // With a vault the key is kept there; the configuration holds only a reference to it.
      const name = `agent-setup.${newId()}.apiKey`;
      await this.#vault.put({ name, value: apiKey, description: `API key of the agent '${agentName}'` });
      parameters.apiKey = vaultReference(name);
    }
    const behavior = await create('behavior', bodies.behavior);
    const llm = await create('llm', bodies.llm);
    const output = bodies.output === undefined ? undefined : await create('output', bodies.output);
    const workflow = await create('workflow', {
      packageExtensions: [
        { type: 'svc://ai.svc.parser', config: {}, extensions: {} },
        { type: 'svc://ai.svc.behavior', config: { uri: behavior.uri } },
        { type: 'svc://ai.svc.llm', config: { uri: llm.uri } },
        ...(output === undefined ? [] : [{ type: 'svc://ai.svc.output', config: { uri: output.uri } }]),
      ],
    });
    const agent = await create('agent', { packages: [workflow.uri] });

    let deploymentStatus = 'NOT_DEPLOYED';
    if (request.deploy !== false) {
      const { completion } = await this.#deployments.deploy(environment, agent.id, 1, true, caller);
      deploymentStatus = (await completion).status;
    }
    return {
      action: 'setup_complete',
      agentId: agent.id,
      agentName,
      provider,
      model,
      deployed: deploymentStatus === 'READY',
      deploymentStatus,
      resources: created,
    };
  }
}
