import type { FastifyBaseLogger } from 'fastify';
import { AppError, conflict, notFound } from '../errors.ts';
import { randomId } from '../ids.ts';
import type { Recordings, Transcript } from '../resources/schemas/transcript.ts';
import type { DescriptorOrigin } from '../storage/ports.ts';
import type { ResourceService } from '../resources/service.ts';
import { parseReference } from '../resources/uri.ts';
import { parseContext } from '../runtime/context.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import type { DeploymentService, DeploymentView } from '../runtime/deployments.ts';
import type { Conversation } from '../runtime/memory.ts';
import type { CallerAccess } from '../security/access.ts';
import type { TranscriptRunStore } from '../storage/transcript-run-ports.ts';
import type { LlmServices } from '../tasks/llm/llm-task.ts';
import { checkStep, failedStep, type StepResult } from './check-step.ts';
import { decideAsRecorded, type Waiting } from './decide.ts';
import { transcriptFromConversation } from './record.ts';
import { RecordedCalls } from './recorded-calls.ts';

/**
 * Records transcripts from conversations and replays them (issue 21). A run deploys the agent version privately
 * into the `test` environment (unless it is deployed there already) and undeploys it afterwards, replays the
 * transcript in a fresh conversation of an anonymous user (a turn that waits for a person gets the decision its step
 * recorded), compares every step with what is expected, and stores the result under the transcript (and the suite).
 */

/** Where external calls are answered from: recordings, the network for LLM calls only, or the network for all. */
export const RUN_MODES = ['recorded', 'live-llm', 'live'] as const;
export type RunMode = (typeof RUN_MODES)[number];

export interface RunRequest {
  readonly agentId: string;
  readonly agentVersion: number;
  readonly mode: RunMode;
}

export interface TranscriptRun {
  readonly id: string;
  readonly transcriptId: string;
  readonly transcriptVersion: number;
  readonly transcriptName: string;
  readonly suiteRunId?: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly mode: RunMode;
  readonly conversationId?: string;
  readonly startedOn: number;
  readonly finishedOn: number;
  readonly passed: boolean;
  /** Why the run could not replay at all (the agent version does not deploy, ...). */
  readonly error?: string;
  readonly steps: StepResult[];
}

export interface SuiteRun {
  readonly id: string;
  readonly suiteId: string;
  readonly suiteVersion: number;
  readonly suiteName: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly mode: RunMode;
  readonly startedOn: number;
  readonly finishedOn: number;
  readonly passed: boolean;
  readonly runs: TranscriptRun[];
}

export interface RunSummary {
  readonly id: string;
  readonly passed: boolean;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly mode: RunMode;
  readonly startedOn: number;
  readonly finishedOn: number;
}

/** A failing step of a gate, as the refused deployment's problem body lists it. */
export interface GateFailure {
  readonly transcriptId: string;
  readonly step: number;
  readonly input: string;
  readonly fields: { readonly field: string; readonly diff?: string }[];
}

export interface TranscriptRunServiceOptions {
  readonly resources: ResourceService;
  readonly conversations: ConversationService;
  readonly deployments: DeploymentService;
  readonly store: TranscriptRunStore;
  /** The model providers, for `judge` comparisons. */
  readonly llm: LlmServices | undefined;
  readonly log: FastifyBaseLogger;
  readonly clock?: () => number;
}

const MAX_LISTED_RUNS = 100;

interface Lease {
  count: number;
  readonly ready: Promise<DeploymentView>;
  /** The run deployed the version (it was not deployed in `test`), so the last run undeploys it. */
  readonly ours: boolean;
}

export class TranscriptRunService {
  readonly #options: TranscriptRunServiceOptions;
  readonly #clock: () => number;
  readonly #leases = new Map<string, Lease>();

  constructor(options: TranscriptRunServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Records a conversation as a new transcript; resolves with its reference. */
  async record(conversationId: string, origin: DescriptorOrigin, caller?: CallerAccess): Promise<string> {
    const { conversations, resources } = this.#options;
    const conversation = await conversations.get(conversationId, caller);
    if (conversation.state === 'AWAITING_HUMAN')
      throw conflict(`Conversation ${conversationId} waits for a person; decide first, then record it.`);
    const transcript = await transcriptFromConversation(conversation, (kind, id, version) =>
      resources.read(kind, id, version).catch((error: unknown) => {
        if (error instanceof AppError && error.kind === 'not-found') return undefined;
        throw error;
      }),
    );
    const { uri, id } = await resources.create('transcript', transcript, origin, caller);
    await resources.editDescriptor(id, { name: `Recorded from conversation ${conversationId}` }, 1, caller);
    return uri;
  }

  async runTranscript(
    transcriptId: string,
    version: number | undefined,
    request: RunRequest,
    caller?: CallerAccess,
  ): Promise<TranscriptRun> {
    const loaded = await this.#load('transcript', transcriptId, version, caller);
    await this.#authorizeAgent(request.agentId, caller);
    const run = await this.#withTestDeployment(request, caller, (deployment) =>
      this.#replay(loaded, request, deployment, undefined),
    );
    await this.#save(transcriptId, run);
    return run;
  }

  async runSuite(suiteId: string, version: number | undefined, request: RunRequest, caller?: CallerAccess) {
    const suite = await this.#load('transcriptsuite', suiteId, version, caller);
    const references = (suite.body as { transcripts: string[] }).transcripts.map((uri) => parseReference(uri)!);
    const transcripts = await Promise.all(
      references.map((reference) => this.#load('transcript', reference.id, reference.version, caller)),
    );
    await this.#authorizeAgent(request.agentId, caller);
    const id = randomId();
    const startedOn = this.#clock();
    const runs = await this.#withTestDeployment(request, caller, async (deployment) => {
      const results: TranscriptRun[] = [];
      for (const transcript of transcripts) results.push(await this.#replay(transcript, request, deployment, id));
      return results;
    });
    for (const run of runs) await this.#save(run.transcriptId, run);
    const result: SuiteRun = {
      id,
      suiteId,
      suiteVersion: suite.version,
      suiteName: suite.name,
      agentId: request.agentId,
      agentVersion: request.agentVersion,
      mode: request.mode,
      startedOn,
      finishedOn: this.#clock(),
      passed: runs.every((run) => run.passed),
      runs,
    };
    await this.#save(suiteId, result);
    return result;
  }

  /**
   * The deployment gate: runs the suite from its recordings against the version and refuses (422) when it fails,
   * naming the failing steps.
   */
  async gate(suiteId: string, agentId: string, agentVersion: number, caller?: CallerAccess): Promise<void> {
    const run = await this.runSuite(suiteId, undefined, { agentId, agentVersion, mode: 'recorded' }, caller);
    if (run.passed) return;
    const failures: GateFailure[] = run.runs.flatMap((transcriptRun) => [
      ...(transcriptRun.error === undefined
        ? []
        : [
            {
              transcriptId: transcriptRun.transcriptId,
              step: 0,
              input: '',
              fields: [{ field: 'run', diff: transcriptRun.error }],
            },
          ]),
      ...transcriptRun.steps
        .filter((step) => !step.passed)
        .map((step) => ({
          transcriptId: transcriptRun.transcriptId,
          step: step.step,
          input: step.input,
          fields: step.fields
            .filter((field) => !field.passed)
            .map((field) =>
              field.diff === undefined ? { field: field.field } : { field: field.field, diff: field.diff },
            ),
        })),
    ]);
    throw new AppError(
      'unprocessable',
      `Agent ${agentId} version ${agentVersion} fails the suite ${suiteId}: ${failures.length} failing step(s); it was not deployed.`,
      { suiteRunId: run.id, failures },
    );
  }

  async listRuns(kind: 'transcript' | 'transcriptsuite', subjectId: string, caller?: CallerAccess) {
    await this.#options.resources.currentVersion(kind, subjectId, caller);
    const records = await this.#options.store.list(subjectId, MAX_LISTED_RUNS);
    return records.map((record): RunSummary => {
      const { id, passed, agentId, agentVersion, mode, startedOn, finishedOn } = JSON.parse(
        record.bodyJson,
      ) as RunSummary;
      return { id, passed, agentId, agentVersion, mode, startedOn, finishedOn };
    });
  }

  async readRun(kind: 'transcript' | 'transcriptsuite', subjectId: string, runId: string, caller?: CallerAccess) {
    await this.#options.resources.currentVersion(kind, subjectId, caller);
    const record = await this.#options.store.get(subjectId, runId);
    if (!record) throw notFound(`No run ${runId} of ${kind === 'transcript' ? 'transcript' : 'suite'} ${subjectId}.`);
    return JSON.parse(record.bodyJson) as unknown;
  }

  async #load(kind: 'transcript' | 'transcriptsuite', id: string, version: number | undefined, caller?: CallerAccess) {
    const { resources } = this.#options;
    const chosen = version ?? (await resources.currentVersion(kind, id, caller));
    const body = JSON.parse(await resources.read(kind, id, chosen, caller)) as unknown;
    const { name } = await resources.descriptor(id, caller);
    return { id, version: chosen, name, body };
  }

  async #authorizeAgent(agentId: string, caller: CallerAccess | undefined): Promise<void> {
    await this.#options.resources.authorize(agentId, caller, 'EDIT', 'agent');
  }

  async #save(subjectId: string, run: TranscriptRun | SuiteRun): Promise<void> {
    await this.#options.store.put({
      id: run.id,
      subjectId,
      createdOn: run.startedOn,
      passed: run.passed,
      bodyJson: JSON.stringify(run),
    });
  }

  /** Runs `work` while the version is deployed in `test`; deploys it first and undeploys it after when needed. */
  async #withTestDeployment<T>(
    request: RunRequest,
    caller: CallerAccess | undefined,
    work: (deployment: DeploymentView) => Promise<T>,
  ): Promise<T> {
    const { deployments } = this.#options;
    const { agentId, agentVersion } = request;
    const key = `${agentId}/${agentVersion}`;
    let lease = this.#leases.get(key);
    if (!lease) {
      const ours = deployments.status('test', agentId, agentVersion).status !== 'READY';
      const ready = deployments
        .deploy('test', agentId, agentVersion, false, caller)
        .then(({ completion }) => completion);
      lease = { count: 0, ready, ours };
      this.#leases.set(key, lease);
    }
    lease.count++;
    try {
      return await work(await lease.ready);
    } finally {
      lease.count--;
      if (lease.count === 0 && this.#leases.get(key) === lease) {
        this.#leases.delete(key);
        if (lease.ours)
          await deployments.undeploy('test', agentId, agentVersion).catch((error: unknown) => {
            this.#options.log.warn(
              { err: error, agentId, agentVersion },
              'a transcript run could not undeploy its agent',
            );
          });
      }
    }
  }

  async #replay(
    transcript: { id: string; version: number; name: string; body: unknown },
    request: RunRequest,
    deployment: DeploymentView,
    suiteRunId: string | undefined,
  ): Promise<TranscriptRun> {
    const body = transcript.body as Transcript;
    const startedOn = this.#clock();
    const base = {
      id: randomId(),
      transcriptId: transcript.id,
      transcriptVersion: transcript.version,
      transcriptName: transcript.name,
      ...(suiteRunId === undefined ? {} : { suiteRunId }),
      agentId: request.agentId,
      agentVersion: request.agentVersion,
      mode: request.mode,
      startedOn,
    };
    if (deployment.status !== 'READY') {
      const error = `Agent ${request.agentId} version ${request.agentVersion} did not deploy: ${deployment.error ?? deployment.status}`;
      return { ...base, finishedOn: this.#clock(), passed: false, error, steps: [] };
    }
    const callsOf = (recordings: Recordings | undefined) =>
      request.mode === 'live' ? undefined : new RecordedCalls(recordings, { liveLlm: request.mode === 'live-llm' });
    const llmRecorded = request.mode === 'recorded';
    const steps: StepResult[] = [];
    const { conversations } = this.#options;
    const startCalls = callsOf(body.start?.recordings);
    let conversation: Conversation;
    let waiting: Waiting;
    try {
      const started = await conversations.start(request.agentId, 'test', {
        context: parseContext(body.start?.context),
        agentVersion: request.agentVersion,
        replay: startCalls,
      });
      ({ conversation, waiting } = await decideAsRecorded(conversations, started, {
        decision: body.start?.decision,
        calls: startCalls,
        llmRecorded,
      }));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        ...base,
        finishedOn: this.#clock(),
        passed: false,
        error: `The conversation could not start: ${reason}`,
        steps,
      };
    }
    steps.push(
      await checkStep(
        {
          transcript: body,
          number: 0,
          input: '',
          expected: body.start?.expected,
          conversation,
          calls: startCalls,
          waiting,
        },
        this.#options.llm,
      ),
    );
    for (const [index, turn] of body.turns.entries()) {
      const number = index + 1;
      if (conversation.state === 'ENDED') {
        steps.push(failedStep(number, turn.input, conversation.state, 'the conversation had ended before this turn'));
        continue;
      }
      const calls = callsOf(turn.recordings);
      try {
        const answered = await conversations.say(conversation.id, {
          input: turn.input,
          context: parseContext(turn.context, `turns[${index}].context`),
          replay: calls,
        });
        ({ conversation, waiting } = await decideAsRecorded(conversations, answered, {
          decision: turn.decision,
          calls,
          llmRecorded,
        }));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        steps.push(failedStep(number, turn.input, conversation.state, reason));
        continue;
      }
      steps.push(
        await checkStep(
          { transcript: body, number, input: turn.input, expected: turn.expected, conversation, calls, waiting },
          this.#options.llm,
        ),
      );
    }
    return {
      ...base,
      conversationId: conversation.id,
      finishedOn: this.#clock(),
      passed: steps.every((step) => step.passed),
      steps,
    };
  }
}
