import type { HttpCallTools } from '../../llm/http-call-tools.ts';
import { stringArgument, type ToolDefinition } from '../../llm/tool-definitions.ts';
import type { KnowledgeBase, KnowledgeService } from '../../knowledge/service.ts';
import type { SearchHit } from '../../knowledge/vector-index.ts';
import { DeploymentError, stepUri, type CompileContext } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { HTTP_CALLS_TASK_TYPE } from '../httpcalls/httpcalls-task.ts';
import { boundKnowledgeBases } from '../rag/rag-task.ts';

/**
 * Retrieval for an LLM task (the original's fields): `knowledgeBases[]` names knowledge bases its workflow binds
 * (`svc://ai.svc.rag` steps), each with optional `maxResults` / `minScore`; `enableWorkflowRag` takes every bound
 * one (with `ragDefaults`); `httpCallRag` names an HTTP call whose answer is the context (for a vector store
 * elsewhere; the templates see the question as `{userInput}`). The retrieved chunks are appended to the system
 * message under "## Relevant Context:", each with its source, up to `maxRagContextChars`; the step data holds
 * `rag:sources:<task id>` (document, chunk, score, text: what a client shows as citations), `rag:trace:<task id>`
 * and `rag:context:<task id>`. In agent mode the model also gets the tool `search_knowledge_base`.
 */

export interface KnowledgeBaseReference {
  readonly name: string;
  readonly maxResults?: number;
  readonly minScore?: number;
}

export interface RetrievalConfig {
  readonly knowledgeBases?: readonly KnowledgeBaseReference[];
  readonly enableWorkflowRag?: boolean;
  readonly ragDefaults?: { readonly maxResults?: number; readonly minScore?: number };
  readonly httpCallRag?: string;
  readonly maxRagContextChars?: number;
}

interface Selected {
  readonly knowledgeBase: KnowledgeBase;
  readonly maxResults: number | undefined;
  readonly minScore: number | undefined;
}

export interface CompiledRetrieval {
  readonly knowledgeBases: readonly Selected[];
  readonly httpCall: { readonly reference: string; readonly name: string } | undefined;
  /** Characters of context at most (Infinity: no limit). */
  readonly maxContextChars: number;
  readonly service: KnowledgeService | undefined;
  readonly httpCallTools: HttpCallTools | undefined;
}

export interface Source extends SearchHit {
  readonly knowledgeBase: string;
}

export const KNOWLEDGE_TOOL_NAME = 'search_knowledge_base';
const DEFAULT_MAX_CONTEXT_CHARS = 20_000;

export async function compileRetrieval(
  config: RetrievalConfig,
  where: string,
  context: CompileContext,
  httpCallTools: HttpCallTools | undefined,
): Promise<CompiledRetrieval | undefined> {
  const references = config.knowledgeBases ?? [];
  const wantsVectors = references.length > 0 || config.enableWorkflowRag === true;
  const httpCallName = config.httpCallRag?.trim() || undefined;
  if (!wantsVectors && httpCallName === undefined) return undefined;

  const knowledgeBases: Selected[] = [];
  if (wantsVectors) {
    if (!context.services.knowledge) throw new DeploymentError('Knowledge bases are not available in this service.');
    const bound = await boundKnowledgeBases(context);
    if (bound.length === 0)
      throw new DeploymentError(
        `${where} retrieves from knowledge bases, but its workflow binds none: add a svc://ai.svc.rag step with the knowledge base's uri.`,
      );
    const defaults = config.ragDefaults ?? {};
    if (config.enableWorkflowRag === true)
      for (const knowledgeBase of bound)
        knowledgeBases.push({ knowledgeBase, maxResults: defaults.maxResults, minScore: defaults.minScore });
    for (const [i, reference] of references.entries()) {
      const knowledgeBase = bound.find((candidate) => candidate.config.name === reference.name);
      if (!knowledgeBase)
        throw new DeploymentError(
          `${where}: knowledgeBases[${i}] names '${reference.name}', which no knowledge base of the workflow is called (bound: ${bound.map((b) => `'${b.config.name}'`).join(', ')}).`,
        );
      if (knowledgeBases.some((selected) => selected.knowledgeBase.id === knowledgeBase.id)) continue;
      knowledgeBases.push({
        knowledgeBase,
        maxResults: reference.maxResults ?? defaults.maxResults,
        minScore: reference.minScore ?? defaults.minScore,
      });
    }
  }

  let httpCall: CompiledRetrieval['httpCall'];
  if (httpCallName !== undefined) {
    if (!httpCallTools) throw new DeploymentError(`${where}: HTTP calls are not available in this service.`);
    httpCall = await findHttpCall(httpCallName, context, httpCallTools);
    if (!httpCall)
      throw new DeploymentError(
        `${where}: httpCallRag names the HTTP call '${httpCallName}', which no HTTP-call set of the workflow has.`,
      );
  }
  const limit = config.maxRagContextChars ?? DEFAULT_MAX_CONTEXT_CHARS;
  return {
    knowledgeBases,
    httpCall,
    maxContextChars: limit <= 0 ? Number.POSITIVE_INFINITY : limit,
    service: context.services.knowledge,
    httpCallTools,
  };
}

async function findHttpCall(
  name: string,
  context: CompileContext,
  httpCallTools: HttpCallTools,
): Promise<CompiledRetrieval['httpCall']> {
  for (const step of context.workflowSteps ?? []) {
    if (step.type !== HTTP_CALLS_TASK_TYPE) continue;
    const uri = (part: unknown) => (part as { uri?: string } | undefined)?.uri;
    const reference = stepUri({ uri: uri(step.config) }, { uri: uri(step.extensions) });
    if (reference === undefined) continue;
    const calls = await httpCallTools.describe(reference, context);
    if (calls.some((call) => call.name === name)) return { reference, name };
  }
  return undefined;
}

/** Searches every selected knowledge base for the query; the best chunks of all of them, best first. */
async function search(retrieval: CompiledRetrieval, query: string, signal: AbortSignal): Promise<Source[]> {
  const found = await Promise.all(
    retrieval.knowledgeBases.map(async ({ knowledgeBase, maxResults, minScore }) =>
      (await retrieval.service!.search(knowledgeBase, query, { maxResults, minScore }, signal)).map((hit) => ({
        ...hit,
        knowledgeBase: knowledgeBase.config.name,
      })),
    ),
  );
  return found.flat().sort((a, b) => b.score - a.score);
}

/** Context blocks within the character limit; a marker says how many were left out. */
function formatSources(sources: readonly Source[], limit: number): string {
  const blocks: string[] = [];
  let length = 0;
  for (const [i, source] of sources.entries()) {
    const block = `[${i + 1}] (source: ${source.documentName}, knowledge base ${source.knowledgeBase}, chunk ${source.chunkIndex + 1})\n${source.text}`;
    if (length + block.length > limit) {
      blocks.push(
        `[... ${sources.length - i} further retrieved passage(s) omitted: RAG context limit (${limit} chars) reached ...]`,
      );
      break;
    }
    blocks.push(block);
    length += block.length;
  }
  return blocks.join('\n\n');
}

/**
 * Retrieves for the turn's input and records sources, trace and context in the step; answers the text to append
 * to the system message, or undefined when nothing was found.
 */
export async function retrieveContext(
  retrieval: CompiledRetrieval,
  taskId: string,
  turn: Turn,
  query: string,
): Promise<string | undefined> {
  const parts: string[] = [];
  if (retrieval.knowledgeBases.length > 0 && query.trim() !== '') {
    const sources = turn.replay
      ? [...turn.replay.retrievedSources(taskId)]
      : await search(retrieval, query, turn.signal);
    turn.set(
      `rag:trace:${taskId}`,
      retrieval.knowledgeBases.map(({ knowledgeBase, maxResults, minScore }) => ({
        knowledgeBase: knowledgeBase.config.name,
        knowledgeBaseId: knowledgeBase.id,
        maxResults: maxResults ?? knowledgeBase.config.maxResults,
        minScore: minScore ?? knowledgeBase.config.minScore,
        retrievedCount: sources.filter((source) => source.knowledgeBase === knowledgeBase.config.name).length,
      })),
    );
    turn.set(`rag:sources:${taskId}`, sources);
    if (sources.length > 0) parts.push(`## Relevant Context:\n${formatSources(sources, retrieval.maxContextChars)}`);
  }
  if (retrieval.httpCall && retrieval.httpCallTools) {
    const { reference, name } = retrieval.httpCall;
    const answer = await retrieval.httpCallTools.run(reference, name, { userInput: query }, turn);
    const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
    const limited = text.length > retrieval.maxContextChars ? text.slice(0, retrieval.maxContextChars) : text;
    turn.set(`rag:httpcall:trace:${taskId}`, { httpCall: name, contextLength: limited.length });
    if (limited.trim() !== '') parts.push(`## Search Results:\n${limited}`);
  }
  if (parts.length === 0) return undefined;
  const context = parts.join('\n\n');
  turn.set(`rag:context:${taskId}`, context);
  return context;
}

/** The agent-mode tool over the task's knowledge bases (none when the task retrieves from none). */
export function knowledgeTool(retrieval: CompiledRetrieval | undefined): ToolDefinition | undefined {
  if (!retrieval || retrieval.knowledgeBases.length === 0) return undefined;
  const names = retrieval.knowledgeBases.map(({ knowledgeBase }) => knowledgeBase.config.name).join(', ');
  return {
    name: KNOWLEDGE_TOOL_NAME,
    description: `Search the knowledge base (${names}) for passages about a question; answers the best passages with their sources.`,
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'what to look for' } },
      required: ['query'],
    },
    async run(args, { signal }) {
      const sources = await search(retrieval, stringArgument(args, 'query')!, signal);
      if (sources.length === 0) return 'Nothing relevant was found in the knowledge base.';
      return formatSources(sources, retrieval.maxContextChars);
    },
  };
}
