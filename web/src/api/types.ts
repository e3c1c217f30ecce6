/** Wire shapes of the service (the spec's names). */

export interface Descriptor {
  readonly resource: string;
  readonly name?: string;
  readonly description?: string;
  readonly createdOn?: number;
  readonly lastModifiedOn?: number;
  readonly deleted?: boolean;
  readonly [member: string]: unknown;
}

export type DeploymentStatusName = 'NOT_FOUND' | 'IN_PROGRESS' | 'ERROR' | 'READY';

export interface DeploymentStatus {
  readonly environment: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly status: DeploymentStatusName;
  readonly autoDeploy?: boolean;
  readonly deployedOn?: number;
  readonly error?: string;
}

export interface AgentDeployments {
  readonly agentId: string;
  readonly environments: Record<string, DeploymentStatus[]>;
}

export interface QuickReply {
  readonly value: string;
  readonly expressions?: string;
}

export interface ConversationOutput {
  readonly input?: string;
  readonly expressions?: string;
  readonly intents?: string[];
  readonly actions?: string[];
  readonly output?: string[];
  readonly quickReplies?: QuickReply[];
  /** Why the turn of this step failed (the task and what went wrong). */
  readonly error?: string;
  readonly httpCalls?: unknown[];
  readonly properties?: unknown;
  readonly [member: string]: unknown;
}

export interface ConversationStepEntry {
  readonly key: string;
  readonly value: unknown;
  readonly timestamp?: number | string;
  readonly originWorkflowId?: string;
}

export interface Conversation {
  readonly conversationId: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId?: string;
  readonly environment: string;
  readonly conversationState: string;
  readonly undoAvailable?: boolean;
  readonly redoAvailable?: boolean;
  readonly conversationOutputs: ConversationOutput[];
  readonly conversationProperties?: Record<string, { name: string; value: unknown; scope: string }>;
  readonly conversationSteps?: { conversationStep: ConversationStepEntry[]; timestamp?: number }[];
  readonly createdOn?: number;
  readonly lastModifiedOn?: number;
}

export interface ConversationDescriptor {
  readonly resource?: string;
  readonly conversationId: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId?: string;
  readonly environment: string;
  readonly conversationState: string;
  readonly conversationStepSize?: number;
  readonly createdOn?: number;
  readonly lastModifiedOn?: number;
}

export interface HealthReport {
  readonly status: 'UP' | 'DOWN';
  readonly checks: { name: string; status: 'UP' | 'DOWN'; reason?: string }[];
}

export interface LogEntry {
  readonly timestamp: number;
  readonly level: string;
  readonly message: string;
  readonly agentId?: string;
  readonly conversationId?: string;
  readonly [member: string]: unknown;
}

export interface ContextValue {
  readonly type: string;
  readonly value: unknown;
}

export interface BotTrigger {
  readonly intent: string;
  readonly botDeployments: { environment: string; botId: string; initialContext?: Record<string, ContextValue> }[];
}

export interface SecretMetadata {
  readonly name: string;
  readonly description?: string;
  readonly [member: string]: unknown;
}

export interface Agent {
  readonly packages: string[];
  readonly [member: string]: unknown;
}

export interface WorkflowExtension {
  readonly type: string;
  readonly config?: Record<string, unknown>;
  readonly extensions?: Record<string, unknown>;
}

export interface Workflow {
  readonly packageExtensions: WorkflowExtension[];
}

export const COMPARISONS = ['exact', 'ignore', 'regex', 'contains', 'tolerance', 'subset', 'judge'] as const;
export type Comparison = (typeof COMPARISONS)[number];

/** An expected value of a transcript step and how it is compared. */
export interface Expectation {
  value?: unknown;
  compare?: Comparison;
  tolerance?: number;
  rubric?: string;
}

export interface TranscriptExpected {
  output?: Expectation;
  quickReplies?: Expectation;
  actions?: Expectation;
  properties?: Record<string, Expectation>;
}

export interface TranscriptStep {
  input?: string;
  context?: Record<string, ContextValue>;
  expected?: TranscriptExpected;
  recordings?: { httpCalls?: unknown[]; llm?: unknown[]; retrieval?: unknown[] };
  /** The person's decision when the step's turn waited for one (kept as it is by the editor). */
  decision?: {
    action: Decision['decision'];
    answer?: string;
    reason?: string;
    pauseType?: PendingApproval['pauseType'];
  };
}

export interface Transcript {
  agentId?: string;
  agentVersion?: number;
  start?: TranscriptStep;
  turns: (TranscriptStep & { input: string })[];
  judge?: unknown;
}

export interface FieldResult {
  readonly field: string;
  readonly compare: string;
  readonly passed: boolean;
  readonly expected?: unknown;
  readonly actual?: unknown;
  readonly diff?: string;
}

export interface StepResult {
  readonly step: number;
  readonly input: string;
  readonly passed: boolean;
  readonly conversationState: string;
  readonly fields: readonly FieldResult[];
}

export interface TranscriptRunSummary {
  readonly id: string;
  readonly passed: boolean;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly mode: string;
  readonly startedOn: number;
  readonly finishedOn: number;
}

export interface TranscriptRun extends TranscriptRunSummary {
  readonly transcriptId: string;
  readonly transcriptVersion: number;
  readonly transcriptName: string;
  readonly conversationId?: string;
  readonly error?: string;
  readonly steps: readonly StepResult[];
}

/** A turn waiting for a person (`GET /agents/pending-approvals`). */
export interface PendingApproval {
  readonly approvalId: string;
  readonly conversationId: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId: string;
  readonly environment: string;
  readonly pauseType: 'pause' | 'tool-approval';
  readonly task: string;
  readonly pausedAt: number;
  readonly input: string;
  readonly output: readonly string[];
  readonly toolCalls: ReadonlyArray<{ toolCallId: string; tool: string; arguments: Record<string, unknown> }>;
  readonly queuedMessages: number;
  readonly escalated: boolean;
}

/** A person's decision on a waiting turn (`POST /agents/<conversationId>/resume`). */
export interface Decision {
  readonly decision: 'approve' | 'reject' | 'answer';
  readonly approvalId?: string;
  readonly answer?: string;
  readonly reason?: string;
  readonly arguments?: Record<string, Record<string, unknown>>;
}

/** A knowledge-base ingestion and the state of each of its documents. */
export interface Ingestion {
  readonly ingestionId: string;
  readonly status: 'pending' | 'processing' | 'completed' | 'completed_with_errors' | 'failed';
  readonly documents: ReadonlyArray<{
    readonly name: string;
    readonly status: string;
    readonly chunks?: number;
    readonly error?: string;
  }>;
}

export interface KnowledgeDocument {
  readonly id: string;
  readonly name: string;
  readonly contentType: string;
  readonly sizeBytes: number;
  readonly chunkCount: number;
  readonly updatedOn: number;
}

export interface SearchHit {
  readonly documentName: string;
  readonly chunkIndex: number;
  readonly text: string;
  readonly score: number;
}

/** A schedule (`/schedulestore/schedules`): a message sent to an agent on a cron schedule or an interval. */
export interface Schedule {
  readonly agentId: string;
  readonly environment?: string;
  readonly cron?: string;
  readonly timeZone?: string;
  readonly intervalSeconds?: number;
  readonly message: string;
  readonly conversation?: 'new' | 'persistent';
  readonly enabled?: boolean;
  readonly missedRuns?: 'skip' | 'catchUp';
  readonly [field: string]: unknown;
}

export interface ScheduleRun {
  readonly id: string;
  readonly dueOn: number;
  readonly startedOn: number;
  readonly finishedOn?: number;
  readonly outcome: 'RUNNING' | 'OK' | 'ERROR' | 'FAILED' | 'SKIPPED';
  readonly conversationId?: string;
  readonly detail?: string;
}

export interface ScheduleHistory {
  readonly scheduleId: string;
  readonly enabled: boolean;
  readonly nextRunOn?: number;
  readonly runs: readonly ScheduleRun[];
}

/** A message a messaging platform delivered to an agent's channel. */
export interface ChannelMessage {
  readonly id: string;
  readonly platform: string;
  readonly messageKey: string;
  readonly senderKey: string;
  readonly input: string;
  readonly receivedOn: number;
  readonly state: 'PENDING' | 'PROCESSING' | 'DONE' | 'FAILED';
  readonly finishedOn?: number;
  readonly conversationId?: string;
  readonly detail?: string;
}

export interface AgentChannel {
  readonly type: string;
  readonly config?: Readonly<Record<string, string>>;
}

/** A group (`/groupstore/groups`): agents that discuss a question in a style, and a moderator. */
export interface Group {
  readonly name?: string;
  readonly members: readonly { agentId: string; displayName: string; speakingOrder?: number; role?: string }[];
  readonly moderatorAgentId: string;
  readonly style: string;
  readonly maxRounds?: number;
  readonly protocol?: { agentTimeoutSeconds?: number };
  readonly [field: string]: unknown;
}

export interface GroupContribution {
  readonly question: number;
  readonly phase: string;
  readonly phaseType: string;
  readonly speaker: { agentId: string; displayName: string; role?: string };
  readonly about?: string;
  readonly status: 'OK' | 'FAILED' | 'TIMEOUT';
  readonly text?: string;
  readonly error?: string;
  readonly conversationId?: string;
}

export interface GroupDiscussion {
  readonly id: string;
  readonly groupId: string;
  readonly state: 'RUNNING' | 'DONE';
  readonly createdOn: number;
  readonly questions: readonly { input: string; synthesis?: string }[];
  readonly contributions: readonly GroupContribution[];
}

export type GroupDiscussionSummary = Omit<GroupDiscussion, 'contributions'>;
