import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { BackupService } from './backup/service.ts';
import { EmbeddingModels } from './knowledge/embedding-providers.ts';
import { KnowledgeService } from './knowledge/service.ts';
import { buildApp } from './http/app.ts';
import { BUILT_IN_TOOL_NAMES } from './llm/built-in-tools.ts';
import { ToolHistory } from './llm/tool-history.ts';
import { guardedWebAccess } from './llm/web-page.ts';
import { A2AService } from './integrations/a2a/a2a-service.ts';
import { AgentChat } from './integrations/a2a/agent-chat.ts';
import { AgentDirectory } from './integrations/a2a/agent-directory.ts';
import { TriggerService } from './integrations/managed/triggers.ts';
import { AgentTools } from './integrations/mcp/agent-tools.ts';
import { AuditLedger } from './ops/audit.ts';
import { Drain } from './ops/drain.ts';
import { createLogBuffer, teeDestination } from './ops/log-buffer.ts';
import { deployedAgentsGauge } from './ops/domain-metrics.ts';
import { createMetrics, instrumentStorage } from './ops/metrics.ts';
import { startPeriodicJob, type PeriodicJob } from './ops/periodic-job.ts';
import { disablePretenuring } from './ops/pretenuring.ts';
import { Retention } from './ops/retention.ts';
import { ResourceService } from './resources/service.ts';
import { ApprovalEvents } from './runtime/approval-events.ts';
import { startApprovalTimeouts } from './runtime/approval-timeouts.ts';
import { ConversationService } from './runtime/conversations.ts';
import { DeploymentService } from './runtime/deployments.ts';
import { TaskRegistry, type TaskDefinition } from './runtime/tasks.ts';
import { openVault, type Vault } from './security/vault.ts';
import { createOutbound, type Outbound } from './security/outbound.ts';
import { alwaysGuard, createUrlGuard } from './security/url-guard.ts';
import { otlpTracesUrl, type Settings } from './settings.ts';
import { LocalCluster } from './storage/local-cluster.ts';
import { openStorage } from './storage/open.ts';
import { TranscriptRunService } from './transcripts/runs.ts';
import { Scheduler } from './schedules/scheduler.ts';
import { ChannelService } from './channels/channel-service.ts';
import { GroupService } from './groups/group-service.ts';
import { UserMemoryService } from './user-memory/service.ts';
import { UserDataService } from './user-memory/user-data.ts';
import { ResourceCatalogue } from './resources/catalogue.ts';
import { builtInTasks, createTaskServices, type TaskServiceOptions } from './tasks/index.ts';
import type { HttpCallExecutorOptions } from './tasks/httpcalls/executor.ts';
import type { LlmTaskOptions } from './tasks/llm/llm-task.ts';

const SECRETS_CHANNEL = 'svc_secrets';

export interface RunningServer {
  readonly app: FastifyInstance;
  /** Base URL, e.g. `http://127.0.0.1:7070`. */
  readonly url: string;
  /** The secrets vault (disabled without `svc.vault.master-key`); its `resolver()` reads `${vault:NAME}` references. */
  readonly vault: Vault;
  /** The audit ledger (tests flush it to read what a turn recorded). */
  readonly audit: AuditLedger;
  /** Runs due schedules (tests call `tick()` with their own clock instead of waiting for the poll). */
  readonly scheduler: Scheduler;
  /** Messaging channels (tests call `sweep()` to pick up messages an instance left behind). */
  readonly channels: ChannelService;
  /** The retention sweep's periodic job, when a retention setting is on (tests call `runNow()`). */
  readonly retention: PeriodicJob | undefined;
  /**
   * Drains before a shutdown: readiness fails, new requests get 503 (`Retry-After`), background pick-ups stop, and
   * the turns and writes in flight finish, within `svc.shutdown.drain-timeout-seconds`; past it the connections
   * still open are cut (a turn cut off is never answered; commits are atomic, so none is half-written). Call
   * `close()` after it.
   */
  drain(): Promise<void>;
  /** Stops accepting connections, lets in-flight requests finish, then closes the store. */
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Where log lines go besides the in-memory buffer (stdout by default; tests pass a sink). */
  readonly logDestination?: { write(line: string): unknown };
  /** Task types besides the built-in ones (an embedder's own tasks). */
  readonly extraTasks?: readonly TaskDefinition[];
  /**
   * The clock of schedules, of channel messages' leases, of configuration writes, of conversations' timestamps and of
   * the retention sweep (tests set the time).
   */
  readonly clock?: () => number;
  /** How long finished spans wait before they are exported in a batch (default 5 s; tests shorten it). */
  readonly traceExportDelayMillis?: number;
}

/**
 * The composition root. Start-up order: settings (given) -> storage -> services (deployments compiled again)
 * -> HTTP app -> listen.
 */
export async function startServer(settings: Settings, options: ServerOptions = {}): Promise<RunningServer> {
  disablePretenuring();
  const metrics = createMetrics();
  const tracesUrl = otlpTracesUrl(settings['svc.tracing.otlp-endpoint']);
  // The tracing SDK is loaded only when traces are on.
  const tracing =
    tracesUrl === undefined
      ? undefined
      : new (await import('./ops/tracing.ts')).Tracing({
          url: tracesUrl,
          serviceName: settings['svc.tracing.service-name'],
          scheduledDelayMillis: options.traceExportDelayMillis,
        });
  const logBuffer = createLogBuffer(settings['svc.logs.buffer-size']);
  const logger = pino(
    { level: settings['svc.log.level'], redact: ['req.headers.authorization', 'req.headers.cookie'] },
    teeDestination(logBuffer, options.logDestination ?? process.stdout),
  );
  const storage = instrumentStorage(
    await openStorage(
      settings['svc.datastore.type'] === 'postgres'
        ? {
            type: 'postgres',
            url: settings['svc.datastore.postgres.url'],
            queryTimeoutMillis: settings['svc.datastore.postgres.query-timeout-millis'],
          }
        : { type: 'sqlite', path: settings['svc.datastore.sqlite.path'] },
    ),
    metrics,
    tracing,
  );
  const cluster =
    settings['svc.datastore.type'] === 'postgres'
      ? new (await import('./storage/postgres/cluster.ts')).PostgresCluster(
          settings['svc.datastore.postgres.url'],
          undefined,
          lockWaitLimitMillis(settings),
        )
      : new LocalCluster();
  // A wrong master key fails here, before anything else starts. Every instance forgets a secret changed anywhere.
  const vault = await openVault(storage.secrets, settings['svc.vault.master-key'], {
    meters: metrics.vault,
    onChange: (tenant, name) =>
      void cluster.publish(SECRETS_CHANNEL, JSON.stringify({ tenant, name })).catch(() => undefined),
  }).catch(async (error: unknown) => {
    await cluster.close();
    await storage.close();
    await tracing?.shutdown();
    throw error;
  });
  cluster.subscribe(SECRETS_CHANNEL, (payload) => {
    const { tenant, name } = JSON.parse(payload) as { tenant: string; name: string };
    vault.forget(tenant, name);
  });

  const connectTimeoutMillis = settings['svc.httpcalls.connect-timeout-millis'];
  const interceptor = tracing?.interceptor();
  const outbound = createOutbound(createUrlGuard({ enabled: settings['svc.security.ssrf-protection.enabled'] }), {
    connectTimeoutMillis,
    interceptor,
  });
  if (settings['svc.oidc.tenant-enabled'] && !settings['svc.security.ssrf-protection.enabled'])
    logger.warn(
      {},
      'authentication is on but svc.security.ssrf-protection.enabled is off: HTTP calls, LLM, MCP and A2A targets may reach loopback and private addresses',
    );
  // The built-in web tools reach whatever URL a model asks for: guarded whatever the setting says.
  const webOutbound = createOutbound(alwaysGuard, { connectTimeoutMillis, interceptor });
  let closeMcpClients = async () => {};
  const closeOutbound = async () => {
    await closeMcpClients();
    await Promise.all([outbound.close(), webOutbound.close()]);
  };
  const tasks = [...builtInTasks, ...(options.extraTasks ?? [])];
  const resources = new ResourceService(storage.resources, new ResourceCatalogue(tasks), options.clock);
  const authorize = resources.authorize.bind(resources);
  const toolHistory = new ToolHistory({
    defaultRateLimitPerMinute: settings['svc.tools.rate-limit-per-minute'],
    knownTools: BUILT_IN_TOOL_NAMES,
    rateLimitStore: storage.rateLimits,
    meters: metrics.tools,
  });
  const knowledge = new KnowledgeService({
    store: storage.knowledge,
    resources,
    models: new EmbeddingModels({ ollamaBaseUrl: settings['svc.ollama.default-base-url'], fetch: outbound.apiFetch }),
    secrets: vault.resolver(),
    log: logger,
    heartbeatMillis: settings['svc.rag.ingestion-heartbeat-millis'],
    approximateMinChunks: settings['svc.rag.approximate-search-enabled']
      ? settings['svc.rag.approximate-search-min-chunks']
      : undefined,
  });
  const vectorSearch = await knowledge.detectVectorSearch();
  logger.info({ vectorSearch }, `knowledge-base vector search: ${vectorSearch.reason}`);
  const clock = options.clock ?? Date.now;
  const userMemories = new UserMemoryService(storage.userMemories, clock);
  const taskServices = createTaskServices({
    secretWriter: vault,
    httpCalls: { ...httpCallsOptions(settings, vault, outbound, logger), meters: metrics.httpCalls },
    llm: llmOptions(settings, vault, toolHistory, outbound, webOutbound, logger, metrics.llm, tracing, userMemories),
    knowledge,
  });
  closeMcpClients = () => taskServices.mcp?.clients.close() ?? Promise.resolve();
  const deployments = new DeploymentService({
    store: storage.deployments,
    read: (kind, id, version) => storage.resources.read(kind, id, version),
    authorize,
    visible: resources.visible.bind(resources),
    authorizeReferenced: resources.authorizeReferenced.bind(resources),
    registry: new TaskRegistry(tasks, taskServices),
    log: logger,
    cluster,
  });
  deployedAgentsGauge([metrics.registry], () => deployments.list());
  const audit = new AuditLedger({
    store: storage.audit,
    masterKey: settings['svc.vault.master-key'],
    maxQueueSize: settings['svc.audit.max-queue-size'],
    deadLetterPath: settings['svc.audit.dead-letter-path'],
    registry: metrics.registry,
    log: logger,
  });
  const approvalEvents = new ApprovalEvents(cluster);
  const conversations = new ConversationService({
    store: storage.conversations,
    cluster,
    userProperties: storage.userProperties,
    deployments,
    authorize,
    log: logger,
    turnTimeoutMs: settings['svc.conversations.turn-timeout-seconds'] * 1000,
    claimMarginMs: settings['svc.conversations.claim-margin-millis'],
    redoCacheSize: settings['svc.conversations.redo-cache-size'],
    retryWindowSteps: settings['svc.conversations.retry-window-steps'],
    cacheSize: settings['svc.conversations.cache-size'],
    cacheMegabytes: settings['svc.conversations.cache-megabytes'],
    maxActiveConversations: settings['svc.coordinator.max-active-conversations'],
    clock: options.clock,
    audit,
    onApprovalsChanged: (conversationId) => approvalEvents.changed(conversationId),
    meters: metrics.conversations,
    taskMeters: metrics.tasks,
    tracing,
  });
  const retention = new Retention({
    conversations,
    store: storage.conversations,
    userProperties: storage.userProperties,
    endedDays: settings['svc.conversations.deleteEndedConversationsOnceOlderThanDays'],
    idleDays: settings['svc.conversations.deleteIdleConversationsOnceOlderThanDays'],
    userMemories,
    userMemoryDays: settings['svc.usermemories.deleteOlderThanDays'],
    batchSize: settings['svc.retention.batch-size'],
    registry: metrics.registry,
    audit,
    log: logger,
    clock: options.clock,
  });
  const transcriptRuns = new TranscriptRunService({
    resources,
    conversations,
    deployments,
    store: storage.transcriptRuns,
    llm: taskServices.llm,
    log: logger,
  });
  const scheduler = new Scheduler({
    resources,
    store: storage.resources,
    runs: storage.scheduleRuns,
    conversations,
    cluster,
    missedAfterMillis: settings['svc.schedules.missed-after-seconds'] * 1000,
    log: logger,
    clock: options.clock,
  });
  const channelApiUrls = {
    facebook: settings['svc.channels.facebook.api-url'],
    slack: settings['svc.channels.slack.api-url'],
  };
  const channels = new ChannelService({
    store: storage.channelMessages,
    resources,
    deployments,
    conversations,
    cluster,
    secrets: vault.resolver(),
    api: (platform) => ({ fetch: outbound.fetch, baseUrl: channelApiUrls[platform.name] }),
    clock: options.clock,
    leaseMillis:
      settings['svc.conversations.turn-timeout-seconds'] * 1000 + settings['svc.conversations.claim-margin-millis'],
    log: logger,
  });
  const groups = new GroupService({
    resources,
    conversations,
    store: storage.groupDiscussions,
    log: logger,
    clock: options.clock,
  });
  const triggers = new TriggerService(storage.triggers, conversations, resources);
  const userData = new UserDataService({
    memories: userMemories,
    properties: storage.userProperties,
    conversations,
    clock,
  });
  const backup = new BackupService({
    storage,
    resources,
    limits: { maxUnpackedBytes: settings['svc.backup.max-zip-bytes'], maxEntries: settings['svc.backup.max-entries'] },
    maxJsonDepth: settings['svc.http.max-json-depth'],
    clock: options.clock,
  });
  const agentDirectory = new AgentDirectory({ resources, deployments });
  const agentChat = new AgentChat(conversations);
  const a2a = new A2AService({ directory: agentDirectory, chat: agentChat, authorize, settings, log: logger });
  const agentTools = new AgentTools({ directory: agentDirectory, chat: agentChat, log: logger });

  const drainer = new Drain(() => conversations.activeConversations);
  let app: FastifyInstance | undefined;
  try {
    await deployments.restore();
    app = await buildApp({
      settings,
      storage,
      metrics,
      tracing,
      logBuffer,
      logger,
      drain: drainer,
      services: {
        resources,
        deployments,
        conversations,
        triggers,
        backup,
        vault,
        a2a,
        agentTools,
        transcriptRuns,
        scheduler,
        channels,
        groups,
        userMemories,
        userData,
        tools: toolHistory,
        audit,
        approvalEvents,
        knowledge,
      },
    });
    await app.listen({ port: settings['svc.http.port'], host: settings['svc.http.host'] });
  } catch (error) {
    await app?.close();
    await knowledge.close();
    await audit.close().catch(() => undefined);
    await deployments.close();
    await closeOutbound();
    await cluster.close();
    await storage.close();
    await tracing?.shutdown();
    throw error;
  }
  const running = app;
  audit.start();
  metrics.series.start();
  const hitlTimeoutSeconds = settings['svc.hitl.timeout-seconds'];
  const stopApprovalTimeouts =
    hitlTimeoutSeconds > 0
      ? startApprovalTimeouts({
          conversations,
          timeoutMs: hitlTimeoutSeconds * 1000,
          policy: settings['svc.hitl.timeout-policy'],
          log: logger,
        })
      : () => undefined;
  scheduler.start(settings['svc.schedules.poll-interval-millis']);
  channels.start(settings['svc.channels.retry-interval-millis']);
  const retentionJob = retention.enabled
    ? startPeriodicJob({
        name: 'retention',
        intervalMillis: settings['svc.retention.interval-seconds'] * 1000,
        cluster,
        run: async () => {
          await retention.sweep();
        },
        // A failing sweep records itself; this is the job's lock failing (the store does not answer).
        onError: (error) =>
          logger.warn({ errorType: (error as Error).name }, 'the retention sweep could not take its job lock'),
      })
    : undefined;
  const { port } = running.server.address() as AddressInfo;
  const host = settings['svc.http.host'] === '0.0.0.0' ? '127.0.0.1' : settings['svc.http.host'];
  let closing: Promise<void> | undefined;
  return {
    app: running,
    vault,
    audit,
    scheduler,
    channels,
    retention: retentionJob,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async drain() {
      const drained = drainer.drain(settings['svc.shutdown.drain-timeout-seconds'] * 1000);
      // No new work from the background either; the turns it has begun are among those the drain waits for.
      void Promise.all([scheduler.close(), channels.close(), retentionJob?.stop()]).catch(() => undefined);
      if (await drained) {
        logger.info({}, 'drained: no turn or write in flight');
        return;
      }
      logger.warn(drainer.pending, 'drain timed out: cutting the connections still open');
      running.server.closeAllConnections();
    },
    close: () =>
      (closing ??= running.close().then(async () => {
        metrics.series.close();
        stopApprovalTimeouts();
        await retentionJob?.stop();
        await knowledge.close();
        await scheduler.close();
        await channels.close();
        await audit.close();
        await deployments.close();
        await closeOutbound();
        await cluster.close();
        await storage.close();
        await tracing?.shutdown();
      })),
  };
}

/** HTTP calls: secrets from the vault, the guarded outbound dispatcher and the defaults from the settings. */
function httpCallsOptions(
  settings: Settings,
  vault: Vault,
  outbound: Outbound,
  log: HttpCallExecutorOptions['log'],
): HttpCallExecutorOptions {
  return {
    secrets: vault.resolver(),
    outbound,
    defaults: {
      timeoutMillis: settings['svc.httpcalls.default-timeout-millis'],
      maxResponseBytes: settings['svc.httpcalls.default-max-response-size-bytes'],
      maxRedirects: settings['svc.httpcalls.max-redirects'],
    },
    log,
  };
}

/** LLM tasks: secrets from the vault, the tool history, the Ollama default; providers and web tools guarded. */
function llmOptions(
  settings: Settings,
  vault: Vault,
  tools: ToolHistory,
  outbound: Outbound,
  webOutbound: Outbound,
  log: LlmTaskOptions['log'],
  meters: LlmTaskOptions['meters'],
  tracing: LlmTaskOptions['tracing'],
  userMemory: UserMemoryService,
): TaskServiceOptions['llm'] {
  return {
    secrets: vault.resolver(),
    tools,
    userMemory,
    log,
    meters,
    tracing,
    providerDefaults: { ollamaBaseUrl: settings['svc.ollama.default-base-url'], fetch: outbound.apiFetch },
    web: guardedWebAccess(webOutbound),
  };
}

/**
 * How long a query of the conversation-lock connections may go without an answer: twice the longest a turn can
 * hold a conversation (turn timeout plus claim margin) plus the query timeout, so that only a store that stopped
 * answering reaches it, never a turn waiting its turn. Off when the query timeout is off.
 */
function lockWaitLimitMillis(settings: Settings): number {
  const queryTimeout = settings['svc.datastore.postgres.query-timeout-millis'];
  if (queryTimeout === 0) return 0;
  const holdMillis =
    settings['svc.conversations.turn-timeout-seconds'] * 1000 + settings['svc.conversations.claim-margin-millis'];
  return 2 * holdMillis + queryTimeout;
}
