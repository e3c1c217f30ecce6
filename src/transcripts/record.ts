import { kindOfUriType } from '../resources/kinds.ts';
import type {
  Expected,
  HttpCallRecording,
  LlmRecording,
  RecordedDecision,
  Recordings,
  RetrievalRecording,
  Transcript,
} from '../resources/schemas/transcript.ts';
import { parseReference } from '../resources/uri.ts';
import { DECISION_KEY, HUMAN_ANSWER_KEY } from '../runtime/human-approval.ts';
import type { ContextValue, StoredStep } from '../runtime/memory.ts';
import type { Conversation } from '../runtime/memory.ts';
import { outputTexts } from '../runtime/snapshot.ts';
import { isRecord } from '../shared/json.ts';

/**
 * Builds a transcript from a conversation as it happened: per step its input and context, its results as the
 * expected values (compared exactly; the editor relaxes them), and as recordings the answers of its HTTP calls and
 * LLM calls and what its knowledge-base retrievals found. HTTP-call answers come from what the step kept
 * (`saveResponse`): where a call kept none, the recording answers 200 with an empty body. A step whose turn waited
 * for a person records the person's decision.
 */

/** Reads the JSON body of one configuration version (spec names), undefined when it does not exist. */
export type ConfigurationReader = (kind: string, id: string, version: number) => Promise<string | undefined>;

/** What memory says about an HTTP call: where its answer is kept. */
interface HttpCallFacts {
  readonly responseObjectName: string;
  readonly responseHeaderObjectName: string | undefined;
  readonly fireAndForget: boolean;
}

export async function transcriptFromConversation(
  conversation: Conversation,
  read: ConfigurationReader,
): Promise<Transcript> {
  const calls = await httpCallsOf(conversation.agentId, conversation.agentVersion, read);
  const [first, ...rest] = conversation.steps;
  return {
    agentId: conversation.agentId,
    agentVersion: conversation.agentVersion,
    ...(first ? { start: recordStep(first, calls) } : {}),
    turns: rest.map((step) => ({ input: entryValue(step, 'input:initial') ?? '', ...recordStep(step, calls) })),
  };
}

function entryValue(step: StoredStep, key: string): string | undefined {
  const value = step.entries.find((entry) => entry.key === key)?.value;
  return typeof value === 'string' ? value : undefined;
}

function recordStep(step: StoredStep, calls: ReadonlyMap<string, HttpCallFacts>) {
  const context: Record<string, ContextValue> = {};
  for (const entry of step.entries)
    if (entry.key.startsWith('context:')) context[entry.key.slice('context:'.length)] = entry.value as ContextValue;
  const recordings = recordingsOf(step, calls);
  const decision = decisionOf(step);
  return {
    ...(Object.keys(context).length > 0 ? { context } : {}),
    expected: expectedOf(step),
    ...(recordings ? { recordings } : {}),
    ...(decision ? { decision } : {}),
  };
}

/** The person's decision on the step's turn, when it waited for one (the last decision, if it waited more than once). */
function decisionOf(step: StoredStep): RecordedDecision | undefined {
  const decided = step.entries.find((entry) => entry.key === DECISION_KEY)?.value;
  if (!isRecord(decided)) return undefined;
  const action = decided.action as RecordedDecision['action'];
  const answer = entryValue(step, HUMAN_ANSWER_KEY);
  return {
    action,
    ...(action === 'answer' && answer !== undefined ? { answer } : {}),
    ...(typeof decided.reason === 'string' ? { reason: decided.reason } : {}),
    ...(decided.pauseType === 'tool-approval' ? { pauseType: decided.pauseType } : {}),
  };
}

function expectedOf(step: StoredStep): Expected {
  const { output } = step;
  const expected: Expected = {
    output: { value: outputTexts(output.output), compare: 'exact' },
    actions: { value: Array.isArray(output.actions) ? output.actions : [], compare: 'exact' },
  };
  if (Array.isArray(output.quickReplies) && output.quickReplies.length > 0)
    expected.quickReplies = { value: output.quickReplies, compare: 'exact' };
  if (isRecord(output.properties) && Object.keys(output.properties).length > 0)
    expected.properties = Object.fromEntries(
      Object.entries(output.properties).map(([name, value]) => [name, { value, compare: 'exact' as const }]),
    );
  return expected;
}

function recordingsOf(step: StoredStep, calls: ReadonlyMap<string, HttpCallFacts>): Recordings | undefined {
  const kept = new Map(step.entries.map((entry) => [entry.key, entry.value]));
  const tools = toolsRun(step);
  const httpCalls: HttpCallRecording[] = [];
  const llm: LlmRecording[] = [];
  const retrieval: RetrievalRecording[] = [];
  for (const entry of step.entries) {
    const request = /^httpCalls:(.+)Request$/.exec(entry.key);
    const facts = request && calls.get(request[1]!);
    if (request && facts) {
      const recorded = httpCallRecordings(request[1]!, entry.value, facts, kept);
      httpCalls.push(...(tools.has(request[1]!) ? recorded.map((call) => ({ ...call, byTool: true })) : recorded));
    }
    const answer = /^langchain:(?!trace:)[^:]+:(.+)$/.exec(entry.key);
    if (answer && typeof entry.value === 'string') llm.push({ task: answer[1]!, answer: entry.value });
    const retrieved = /^rag:sources:(.+)$/.exec(entry.key);
    if (retrieved && Array.isArray(entry.value))
      retrieval.push({ task: retrieved[1]!, sources: entry.value as RetrievalRecording['sources'] });
  }
  if (httpCalls.length === 0 && llm.length === 0 && retrieval.length === 0) return undefined;
  return {
    ...(httpCalls.length > 0 ? { httpCalls } : {}),
    ...(llm.length > 0 ? { llm } : {}),
    ...(retrieval.length > 0 ? { retrieval } : {}),
  };
}

/** The tools LLM tasks ran in the step (their traces; answers from the tool cache ran nothing). */
function toolsRun(step: StoredStep): Set<string> {
  const tools = new Set<string>();
  for (const entry of step.entries) {
    if (!entry.key.startsWith('langchain:trace:') || !Array.isArray(entry.value)) continue;
    for (const call of entry.value)
      if (isRecord(call) && typeof call.tool === 'string' && call.cached !== true) tools.add(call.tool);
  }
  return tools;
}

function httpCallRecordings(
  name: string,
  requestRecord: unknown,
  facts: HttpCallFacts,
  kept: ReadonlyMap<string, unknown>,
): HttpCallRecording[] {
  const requests = (Array.isArray(requestRecord) ? requestRecord : [requestRecord]).filter(isRecord);
  const batch = Array.isArray(requestRecord);
  const saved = kept.get(`httpCalls:${facts.responseObjectName}`);
  const errorStatus = kept.get(`httpCalls:${facts.responseObjectName}HttpCode`);
  const errorText = kept.get(`httpCalls:${facts.responseObjectName}Error`);
  const headers =
    facts.responseHeaderObjectName === undefined ? undefined : kept.get(`httpCalls:${facts.responseHeaderObjectName}`);
  return requests.map((request, index) => {
    const recorded: HttpCallRecording = {
      name,
      request: {
        method: String(request.method),
        uri: String(request.uri),
        ...(typeof request.body === 'string' ? { body: request.body } : {}),
      },
    };
    if (facts.fireAndForget) return recorded;
    if (typeof errorStatus === 'number')
      return { ...recorded, response: { status: errorStatus, body: typeof errorText === 'string' ? errorText : '' } };
    const body = batch && Array.isArray(saved) ? saved[index] : saved;
    return {
      ...recorded,
      response: {
        status: 200,
        ...(isRecord(headers) && !batch ? { headers: headerTexts(headers) } : {}),
        body: body ?? '',
      },
    };
  });
}

function headerTexts(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]),
  );
}

/**
 * The HTTP calls of an agent version by name: every HTTP-call set its workflows reference, directly (HTTP-call
 * steps) or through other configuration (LLM tasks offering calls as tools).
 */
async function httpCallsOf(
  agentId: string,
  agentVersion: number,
  read: ConfigurationReader,
): Promise<Map<string, HttpCallFacts>> {
  const calls = new Map<string, HttpCallFacts>();
  const seen = new Set<string>();
  const visit = async (kind: string, id: string, version: number): Promise<void> => {
    const key = `${kind}/${id}/${version}`;
    if (seen.has(key)) return;
    seen.add(key);
    const json = await read(kind, id, version);
    if (json === undefined) return;
    const body: unknown = JSON.parse(json);
    if (kind === 'httpcalls') collectCalls(body, calls);
    for (const reference of referencesIn(body)) {
      const parsed = parseReference(reference);
      const referenced = parsed && kindOfUriType(parsed.type);
      if (parsed && referenced) await visit(referenced.name, parsed.id, parsed.version);
    }
  };
  await visit('agent', agentId, agentVersion);
  return calls;
}

function collectCalls(body: unknown, calls: Map<string, HttpCallFacts>): void {
  const list = isRecord(body) && Array.isArray(body.httpCalls) ? body.httpCalls : [];
  for (const call of list) {
    if (!isRecord(call) || typeof call.name !== 'string') continue;
    calls.set(call.name, {
      responseObjectName: typeof call.responseObjectName === 'string' ? call.responseObjectName : call.name,
      responseHeaderObjectName:
        typeof call.responseHeaderObjectName === 'string' ? call.responseHeaderObjectName : undefined,
      fireAndForget: call.fireAndForget === true,
    });
  }
}

function referencesIn(value: unknown): string[] {
  if (typeof value === 'string') return value.startsWith('svc://') ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(referencesIn);
  if (isRecord(value)) return Object.values(value).flatMap(referencesIn);
  return [];
}
