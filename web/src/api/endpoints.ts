/** The service's endpoints as typed functions over the client. No DOM. */
import { t } from '../i18n/index.ts';
import type { MetricsSeries, SeriesWindow } from '../lib/series.ts';
import { sseEvents } from '../lib/sse.ts';
import { ApiError, type ApiClient, type Problem } from './client.ts';
import type { ResourceKind } from './resources.ts';
import type {
  AgentDeployments,
  BotTrigger,
  ChannelMessage,
  Conversation,
  ConversationDescriptor,
  DeploymentStatus,
  GroupContribution,
  GroupDiscussion,
  GroupDiscussionSummary,
  Descriptor,
  HealthReport,
  Decision,
  Ingestion,
  KnowledgeDocument,
  LogEntry,
  SearchHit,
  ScheduleHistory,
  SecretMetadata,
  TranscriptRun,
  TranscriptRunSummary,
} from './types.ts';

export type Api = ReturnType<typeof endpoints>;

const enc = encodeURIComponent;

export function endpoints(client: ApiClient) {
  return {
    client,

    // Configuration stores
    resourceKinds: () => client.get<ResourceKind[]>('/resourcekinds'),
    descriptors: (storePath: string, query: { filter?: string; index?: number; limit?: number } = {}) =>
      client.get<Descriptor[]>(`${storePath}/descriptors`, { query }),
    read: <T = unknown>(storePath: string, id: string, version: number) =>
      client.get<T>(`${storePath}/${enc(id)}`, { query: { version } }),
    currentVersion: async (storePath: string, id: string) =>
      Number(await client.get<string | number>(`${storePath}/${enc(id)}/currentversion`, { as: 'text' })),
    /** Creates version 1; answers the new resource's URI. */
    create: async (storePath: string, body: unknown) =>
      (await client.request('POST', storePath, { json: body })).headers.get('location') ?? '',
    /** Writes the next version; answers its URI. */
    update: async (storePath: string, id: string, version: number, body: unknown) =>
      (await client.request('PUT', `${storePath}/${enc(id)}`, { query: { version }, json: body })).headers.get(
        'location',
      ) ?? '',
    duplicate: async (storePath: string, id: string, version: number) =>
      (await client.request('POST', `${storePath}/${enc(id)}`, { query: { version } })).headers.get('location') ?? '',
    remove: (storePath: string, id: string, version: number, permanent = false) =>
      client.request('DELETE', `${storePath}/${enc(id)}`, { query: { version, permanent: permanent || undefined } }),
    descriptor: (id: string) => client.get<Descriptor>(`/descriptorstore/descriptors/${enc(id)}`),
    describe: (id: string, version: number | undefined, document: { name?: string; description?: string }) =>
      client.request('PATCH', `/descriptorstore/descriptors/${enc(id)}`, {
        query: { version },
        json: { operation: 'SET', document },
      }),

    // Deployments
    deploy: (environment: string, agentId: string, version: number) =>
      client.request<DeploymentStatus>('POST', `/administration/${enc(environment)}/deploy/${enc(agentId)}`, {
        query: { version, autoDeploy: true },
      }),
    undeploy: (environment: string, agentId: string, version: number) =>
      client.request('POST', `/administration/${enc(environment)}/undeploy/${enc(agentId)}`, { query: { version } }),
    deploymentStatus: (environment: string, agentId: string, version: number) =>
      client.get<DeploymentStatus>(`/administration/${enc(environment)}/deploymentstatus/${enc(agentId)}`, {
        query: { version },
      }),
    agentDeployments: (agentId: string) => client.get<AgentDeployments>(`/administration/deploy/${enc(agentId)}`),
    deployments: () => client.get<DeploymentStatus[]>('/deploymentstore/deployments'),

    // Conversations
    start: async (agentId: string, environment: string, userId: string | undefined) => {
      const answer = await client.request<Conversation>('POST', `/agents/${enc(agentId)}/start`, {
        query: { environment, userId },
      });
      return answer.data;
    },
    /**
     * Sends a message and follows the turn (`POST /agents/<id>/stream`): `onToken` gets the LLM's text as it
     * streams; resolves with the conversation when the turn is done.
     */
    sayStreaming: async (
      conversationId: string,
      input: string,
      onToken: (text: string) => void,
    ): Promise<Conversation> => {
      const response = await client.stream(
        `/agents/${enc(conversationId)}/stream`,
        {
          query: { returnDetailed: true, returnCurrentStepOnly: false },
          json: { input },
        },
        'POST',
      );
      let result: Conversation | undefined;
      let failure: ApiError | undefined;
      for await (const event of sseEvents(response.body!)) {
        const data: unknown = JSON.parse(event.data);
        if (event.event === 'token') onToken((data as { text: string }).text);
        else if (event.event === 'done') result = data as Conversation;
        else if (event.event === 'error') failure = new ApiError((data as Problem).status ?? 500, data as Problem);
      }
      if (failure) throw failure;
      if (!result)
        throw new ApiError(0, { title: t('endpoints.incompleteAnswer'), detail: t('endpoints.theTurnEndedWithout') });
      return result;
    },
    conversation: (conversationId: string) =>
      client.get<Conversation>(`/agents/${enc(conversationId)}`, {
        query: { returnDetailed: true, returnCurrentStepOnly: false },
      }),
    undo: (conversationId: string) => client.request('POST', `/agents/${enc(conversationId)}/undo`),
    redo: (conversationId: string) => client.request('POST', `/agents/${enc(conversationId)}/redo`),
    end: (conversationId: string) => client.request('POST', `/agents/${enc(conversationId)}/endConversation`),
    conversations: (query: {
      agentId?: string;
      userId?: string;
      conversationState?: string;
      index?: number;
      limit?: number;
    }) => client.get<ConversationDescriptor[]>('/conversationstore/conversations', { query }),
    storedConversation: (conversationId: string) =>
      client.get<Conversation>(`/conversationstore/conversations/${enc(conversationId)}`),
    deleteConversation: (conversationId: string) =>
      client.request('DELETE', `/conversationstore/conversations/${enc(conversationId)}`),

    // Transcripts (conversation regression tests)
    /** Records a conversation as a new transcript; answers its URI. */
    recordTranscript: async (conversationId: string) =>
      (
        await client.request('POST', `/transcriptstore/transcripts/from-conversation/${enc(conversationId)}`)
      ).headers.get('location') ?? '',
    runTranscript: async (
      transcriptId: string,
      transcriptVersion: number,
      run: { agentId: string; agentVersion: number; mode: string },
    ) =>
      (
        await client.request<TranscriptRun>('POST', `/transcriptstore/transcripts/${enc(transcriptId)}/runs`, {
          query: { version: transcriptVersion },
          json: run,
        })
      ).data,
    // Messaging channels
    channelMessages: (agentId: string) => client.get<ChannelMessage[]>(`/channels/${enc(agentId)}/messages`),

    // Group conversations
    groupDiscussions: (groupId: string) =>
      client.get<GroupDiscussionSummary[]>(`/groups/${enc(groupId)}/conversations`),
    groupDiscussion: (groupId: string, discussionId: string) =>
      client.get<GroupDiscussion>(`/groups/${enc(groupId)}/conversations/${enc(discussionId)}`),
    /**
     * Asks a group (a new discussion, or a follow-up when `discussionId` is given) and follows it: `onContribution`
     * gets each answer as it comes; resolves with the discussion.
     */
    askGroup: async (
      groupId: string,
      discussionId: string | undefined,
      input: string,
      onContribution: (contribution: GroupContribution) => void,
    ): Promise<GroupDiscussion> => {
      const base = `/groups/${enc(groupId)}/conversations`;
      const path = discussionId ? `${base}/${enc(discussionId)}/stream` : `${base}/stream`;
      const response = await client.stream(path, { json: { input } }, 'POST');
      let result: GroupDiscussion | undefined;
      let failure: ApiError | undefined;
      for await (const event of sseEvents(response.body!)) {
        const data: unknown = JSON.parse(event.data);
        if (event.event === 'contribution') onContribution(data as GroupContribution);
        else if (event.event === 'done') result = data as GroupDiscussion;
        else if (event.event === 'error') failure = new ApiError((data as Problem).status ?? 500, data as Problem);
      }
      if (failure) throw failure;
      if (!result)
        throw new ApiError(0, {
          title: t('endpoints.incompleteAnswer'),
          detail: t('endpoints.theDiscussionEndedWithout'),
        });
      return result;
    },

    // Schedules
    scheduleHistory: (scheduleId: string) =>
      client.get<ScheduleHistory>(`/schedulestore/schedules/${enc(scheduleId)}/runs`),
    transcriptRuns: (transcriptId: string) =>
      client.get<TranscriptRunSummary[]>(`/transcriptstore/transcripts/${enc(transcriptId)}/runs`),
    transcriptRun: (transcriptId: string, runId: string) =>
      client.get<TranscriptRun>(`/transcriptstore/transcripts/${enc(transcriptId)}/runs/${enc(runId)}`),

    // Operations
    health: () => client.get<HealthReport>('/q/health/ready'),
    metrics: () => client.get<string>('/q/metrics', { as: 'text' }),
    /** The service's turns, latency, errors and LLM cost over the last hour or day. */
    metricsSeries: (window: SeriesWindow) => client.get<MetricsSeries>('/q/metrics/series', { query: { window } }),
    logs: (query: { level?: string; search?: string; limit?: number }) =>
      client.get<LogEntry[]>('/administration/logs', { query }),
    logStream: (query: { level?: string; search?: string }, signal: AbortSignal) =>
      client.stream('/administration/logs/stream', { query, signal }),

    // Human in the loop
    pendingApprovalStream: (signal: AbortSignal) => client.stream('/agents/pending-approvals/stream', { signal }),
    resume: (conversationId: string, decision: Decision) =>
      client.request<Conversation>('POST', `/agents/${enc(conversationId)}/resume`, { json: decision }),

    // Managed agents
    triggers: () => client.get<BotTrigger[]>('/bottriggerstore/bottriggers'),
    createTrigger: (trigger: BotTrigger) => client.request('POST', '/bottriggerstore/bottriggers', { json: trigger }),
    updateTrigger: (trigger: BotTrigger) =>
      client.request('PUT', `/bottriggerstore/bottriggers/${enc(trigger.intent)}`, { json: trigger }),
    deleteTrigger: (intent: string) => client.request('DELETE', `/bottriggerstore/bottriggers/${enc(intent)}`),

    // Secrets (write-only values)
    secrets: async () => {
      const data = await client.get<unknown>('/secretstore/secrets/default');
      return listOf<SecretMetadata>(data, ['secrets', 'items', 'keys']);
    },
    putSecret: (name: string, value: string, description: string) =>
      client.request('PUT', `/secretstore/secrets/default/${enc(name)}`, { json: { value, description } }),
    deleteSecret: (name: string) => client.request('DELETE', `/secretstore/secrets/default/${enc(name)}`),

    // Backup
    /** Exports an agent version; answers the download path (the Location). */
    // Knowledge bases (documents, ingestion, search)
    ingestFile: async (kbId: string, file: File) => {
      const form = new FormData();
      form.append('files', file, file.name);
      return (await client.request<Ingestion>('POST', `/ragstore/rags/${enc(kbId)}/ingest`, { body: form })).data;
    },
    ingestion: (kbId: string, ingestionId: string) =>
      client.get<Ingestion>(`/ragstore/rags/${enc(kbId)}/ingestion/${enc(ingestionId)}/status`),
    knowledgeDocuments: (kbId: string) => client.get<KnowledgeDocument[]>(`/ragstore/rags/${enc(kbId)}/documents`),
    deleteKnowledgeDocument: (kbId: string, documentId: string) =>
      client.request('DELETE', `/ragstore/rags/${enc(kbId)}/documents/${enc(documentId)}`),
    searchKnowledge: async (kbId: string, query: string) =>
      (
        await client.request<{ results: SearchHit[] }>('POST', `/ragstore/rags/${enc(kbId)}/search`, {
          json: { query },
        })
      ).data.results,

    exportAgent: async (agentId: string, agentVersion: number) =>
      (await client.request('POST', `/backup/export/${enc(agentId)}`, { query: { agentVersion } })).headers.get(
        'location',
      ) ?? `/backup/export/${agentId}-${agentVersion}.zip`,
    download: (path: string) => client.request<Blob>('GET', path, { as: 'blob' }).then((a) => a.data),
    importPreview: (zip: Blob, strategy: string, selectedResources?: string[]) =>
      client
        .request<unknown>('POST', '/backup/import/preview', {
          body: zip,
          contentType: 'application/zip',
          query: {
            strategy,
            selectedResources:
              selectedResources && selectedResources.length > 0 ? selectedResources.join(',') : undefined,
          },
        })
        .then((a) => a.data),
    importZip: async (zip: Blob, strategy: string, selectedResources?: string[]) => {
      const answer = await client.request<{ agentId?: string; agentVersion?: number; location?: string }>(
        'POST',
        '/backup/import',
        {
          body: zip,
          contentType: 'application/zip',
          query: {
            strategy,
            selectedResources:
              selectedResources && selectedResources.length > 0 ? selectedResources.join(',') : undefined,
          },
        },
      );
      return {
        location: answer.headers.get('location') ?? answer.data?.location ?? '',
        agentId: answer.data?.agentId,
        agentVersion: answer.data?.agentVersion,
      };
    },
  };
}

/** A list answer, bare or wrapped in one of the named members. */
export function listOf<T>(data: unknown, members: readonly string[]): T[] {
  if (Array.isArray(data)) return data as T[];
  if (typeof data === 'object' && data !== null) {
    for (const m of members) {
      const v = (data as Record<string, unknown>)[m];
      if (Array.isArray(v)) return v as T[];
    }
  }
  return [];
}
