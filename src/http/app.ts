import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { KindGuard } from '@sinclair/typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { A2AService } from '../integrations/a2a/a2a-service.ts';
import type { BackupService } from '../backup/service.ts';
import type { KnowledgeService } from '../knowledge/service.ts';
import type { TriggerService } from '../integrations/managed/triggers.ts';
import type { AgentTools } from '../integrations/mcp/agent-tools.ts';
import type { AuditLedger } from '../ops/audit.ts';
import type { Drain } from '../ops/drain.ts';
import type { LogBuffer } from '../ops/log-buffer.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { Tracing } from '../ops/tracing.ts';
import type { ResourceService } from '../resources/service.ts';
import type { ApprovalEvents } from '../runtime/approval-events.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import type { DeploymentService } from '../runtime/deployments.ts';
import type { ToolHistory } from '../llm/tool-history.ts';
import type { Vault } from '../security/vault.ts';
import { compileBodyValidator, compileParameterValidator } from '../resources/validation.ts';
import type { Settings } from '../settings.ts';
import type { Storage } from '../storage/ports.ts';
import { rewriteLegacyPath } from './legacy-paths.ts';
import { a2aRoutes } from './a2a.ts';
import { agentSetupRoutes } from './agent-setup.ts';
import { approvalRoutes } from './approvals.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { openAiRoutes } from './openai.ts';
import { OpenAiChat } from '../integrations/openai/openai-chat.ts';
import { ApiKeyService } from '../security/api-keys.ts';
import { auditRoutes } from './audit.ts';
import { authPlugin, registerWithAccess } from './auth.ts';
import { backupRoutes } from './backup.ts';
import { botRoutes } from './bots.ts';
import { limitConnections, requestTimeoutOptions } from './connections.ts';
import { conversationRoutes } from './conversations.ts';
import { deploymentRoutes } from './deployments.ts';
import { managedRoutes } from './managed.ts';
import { managerRoutes } from './manager.ts';
import { mcpRoutes } from './mcp.ts';
import { jsonDepthHook } from './json-depth.ts';
import { knowledgeRoutes } from './knowledge.ts';
import { httpMetricsHook, operationsRoutes } from './operations.ts';
import { registerProblemHandling } from './problems.ts';
import { channelRoutes } from './channels.ts';
import { groupRoutes } from './groups.ts';
import type { GroupService } from '../groups/group-service.ts';
import type { ChannelService } from '../channels/channel-service.ts';
import { scheduleRoutes } from './schedules.ts';
import type { Scheduler } from '../schedules/scheduler.ts';
import { secretRoutes } from './secrets.ts';
import { storeRoutes } from './stores.ts';
import { transcriptRoutes } from './transcripts.ts';
import type { TranscriptRunService } from '../transcripts/runs.ts';
import { toolRoutes } from './tools.ts';
import { workspaceRoutes } from './workspaces.ts';
import { userMemoryRoutes } from './user-memory.ts';
import type { UserMemoryService } from '../user-memory/service.ts';
import type { UserDataService } from '../user-memory/user-data.ts';

export interface AppDependencies {
  readonly settings: Settings;
  readonly storage: Storage;
  readonly metrics: Metrics;
  /** Spans per request when traces are on. */
  readonly tracing?: Tracing | undefined;
  readonly logBuffer: LogBuffer;
  readonly logger: FastifyBaseLogger;
  /** The graceful drain before a shutdown (readiness DOWN, new requests 503); without it there is none. */
  readonly drain?: Drain | undefined;
  readonly services: {
    readonly resources: ResourceService;
    readonly deployments: DeploymentService;
    readonly conversations: ConversationService;
    readonly triggers: TriggerService;
    readonly tools: ToolHistory;
    readonly backup: BackupService;
    readonly vault: Vault;
    readonly a2a: A2AService;
    readonly agentTools: AgentTools;
    readonly transcriptRuns: TranscriptRunService;
    readonly scheduler: Scheduler;
    readonly channels: ChannelService;
    readonly groups: GroupService;
    readonly userMemories: UserMemoryService;
    readonly userData: UserDataService;
    /** The audit ledger (`/auditstore`); without it the routes are absent. */
    readonly audit?: AuditLedger | undefined;
    /** Live updates of the turns waiting for a person; without it the human-in-the-loop routes are absent. */
    readonly approvalEvents?: ApprovalEvents | undefined;
    /** Knowledge-base documents (`/ragstore/rags/<id>/...`); without it the routes are absent. */
    readonly knowledge?: KnowledgeService | undefined;
  };
}

/** Per-request log lines at debug level (visible with `svc.log.level=debug`), so that info stays about events. */
class QuietRequestLogs extends LogController {
  override incomingRequest(request: Parameters<LogController['incomingRequest']>[0]): void {
    request.log.trace({ method: request.method, url: request.url }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null,
    request: Parameters<LogController['requestCompleted']>[1],
    reply: Parameters<LogController['requestCompleted']>[2],
  ): void {
    reply.log.debug(
      {
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        responseTime: reply.elapsedTime,
        err: error ?? undefined,
      },
      'request completed',
    );
  }
}

/** The HTTP application: one plugin per API family over the services. Listening is the caller's business. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { settings, storage, metrics, logBuffer, services } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    logController: new QuietRequestLogs(),
    bodyLimit: settings['svc.http.body-limit-bytes'],
    ...requestTimeoutOptions(settings),
    rewriteUrl: (request) => rewriteLegacyPath(request.url ?? '/'),
    return503OnClosing: false,
    // Secret names may be 200 characters long (the default limit of a path parameter is 100).
    routerOptions: { maxParamLength: 256 },
  });

  limitConnections(app.server, settings, deps.logger);
  registerProblemHandling(app);
  deps.drain?.register(app);
  // Authentication and role checks: registered before any route, so every route's access declaration is seen.
  const apiKeys = new ApiKeyService(storage.apiKeys);
  await app.register(authPlugin, { settings, apiKeys: settings['svc.openai-compat.enabled'] ? apiKeys : undefined });
  // Bodies are checked strictly (nothing coerced or dropped); query strings and path parameters are text and coerced.
  // A request without a body passes only where the route's body schema is `Type.Optional` (messages, starts).
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart !== 'body') return compileParameterValidator(schema);
    const validate = compileBodyValidator(schema);
    if (!(KindGuard.IsSchema(schema) && KindGuard.IsOptional(schema))) return validate;
    const validateIfPresent = (data: unknown) => data === undefined || data === null || validate(data);
    return Object.defineProperty(validateIfPresent, 'errors', { get: () => validate.errors });
  });
  app.addHook('onResponse', httpMetricsHook(metrics));
  deps.tracing?.instrument(app);
  app.addHook('preParsing', jsonDepthHook(settings['svc.http.max-json-depth']));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Conversational agent orchestration service',
        description: 'Versioned agent configuration, deployment, conversations and operations.',
        version: '0.1.0',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'OIDC access token (when svc.oidc.tenant-enabled); x-roles on each operation names the roles that may call it',
          },
        },
      },
    },
  });
  await registerWithAccess(app, { roles: 'authenticated' }, (docs) =>
    docs.register(swaggerUi, { routePrefix: '/q/swagger-ui' }),
  );
  app.get('/q/openapi', { config: { access: { roles: 'authenticated' } }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  await app.register(storeRoutes, { resources: services.resources });
  await app.register(deploymentRoutes, {
    deployments: services.deployments,
    resources: services.resources,
    transcriptRuns: services.transcriptRuns,
  });
  await app.register(transcriptRoutes, { runs: services.transcriptRuns });
  await app.register(scheduleRoutes, { scheduler: services.scheduler });
  await app.register(groupRoutes, { groups: services.groups });
  await app.register(channelRoutes, {
    channels: services.channels,
    slackWindowSeconds: settings['svc.channels.slack.timestamp-window-seconds'],
  });
  await app.register(agentSetupRoutes, {
    resources: services.resources,
    deployments: services.deployments,
    vault: services.vault,
  });
  await app.register(conversationRoutes, { conversations: services.conversations });
  if (services.approvalEvents) {
    await app.register(approvalRoutes, {
      conversations: services.conversations,
      authorize: services.resources.authorize.bind(services.resources),
      events: services.approvalEvents,
    });
  }
  await app.register(botRoutes, { conversations: services.conversations });
  await app.register(managedRoutes, { triggers: services.triggers });
  await app.register(a2aRoutes, { a2a: services.a2a, settings });
  await app.register(mcpRoutes, { tools: services.agentTools });
  await app.register(secretRoutes, { vault: services.vault });
  await app.register(userMemoryRoutes, { memories: services.userMemories, userData: services.userData });
  if (settings['svc.openai-compat.enabled']) {
    await app.register(apiKeyRoutes, { apiKeys });
    const chat = new OpenAiChat({
      conversations: services.conversations,
      deployments: services.deployments,
      threads: storage.chatThreads,
      visible: services.resources.visible.bind(services.resources),
      aliases: settings['svc.openai-compat.model-aliases'],
    });
    await app.register(openAiRoutes, { chat, prefix: '/v1' });
  }
  await app.register(backupRoutes, { backup: services.backup, maxZipBytes: settings['svc.backup.max-zip-bytes'] });
  await app.register(toolRoutes, { tools: services.tools });
  await app.register(workspaceRoutes, { resources: services.resources, settings });
  await app.register(operationsRoutes, {
    storage,
    metrics,
    logBuffer,
    draining: deps.drain ? () => deps.drain!.draining : undefined,
  });
  if (services.audit) await app.register(auditRoutes, { ledger: services.audit });
  if (services.knowledge)
    await app.register(knowledgeRoutes, {
      knowledge: services.knowledge,
      maxDocumentBytes: settings['svc.rag.max-document-bytes'],
      maxDocuments: settings['svc.rag.max-documents'],
      maxUploadBytes: settings['svc.rag.max-upload-bytes'],
    });
  // The web manager last: its catch-all GET answers only what no API route did.
  await app.register(managerRoutes, { settings });
  return app;
}
