import { Type } from '@sinclair/typebox';
import { closed } from '../../resources/schemas/common.ts';
import type { RagConfiguration } from '../../resources/schemas/rag.ts';
import { parseReference } from '../../resources/uri.ts';
import {
  defineTask,
  DeploymentError,
  stepUri,
  uriReferences,
  type CompileContext,
  type WorkflowStepView,
} from '../../runtime/tasks.ts';
import type { KnowledgeBase } from '../../knowledge/service.ts';

/**
 * `svc://ai.svc.rag` (the original's `eddi://ai.labs.rag`): binds a knowledge base to the agent's workflow. The step
 * does nothing in a turn; retrieval runs inside the LLM task, where the user's question is known, from the
 * knowledge bases its workflow binds (`knowledgeBases[].name`, or all of them with `enableWorkflowRag`). Deploying
 * resolves the reference, so a broken one fails the deployment instead of retrieving nothing.
 */

export const RAG_TASK_TYPE = 'ai.svc.rag';

const UriOnly = closed(
  {
    uri: Type.Optional(
      Type.String({ description: 'Reference of the knowledge base: svc://ai.svc.rag/ragstore/rags/<id>?version=<n>.' }),
    ),
  },
  { description: 'The knowledge base.' },
);

export const ragTask = defineTask({
  type: RAG_TASK_TYPE,
  configSchema: UriOnly,
  extensionsSchema: UriOnly,
  references: uriReferences('rag'),
  async compile(config, extensions, context) {
    if (!context.services.knowledge) throw new DeploymentError('Knowledge bases are not available in this service.');
    const reference = stepUri(config, extensions);
    if (reference === undefined)
      throw new DeploymentError("A knowledge-base step needs 'uri': the knowledge base it binds.");
    await context.resolve(reference, 'rag');
    return { type: RAG_TASK_TYPE, execute: () => undefined };
  },
});

/** The knowledge bases the workflow's knowledge-base steps bind, each with the configuration of its version. */
export async function boundKnowledgeBases(context: CompileContext): Promise<KnowledgeBase[]> {
  const bound: KnowledgeBase[] = [];
  for (const step of context.workflowSteps ?? []) {
    if (step.type !== RAG_TASK_TYPE) continue;
    const reference = referenceOf(step);
    if (reference === undefined) continue;
    const config = (await context.resolve(reference, 'rag')) as RagConfiguration;
    bound.push({ id: parseReference(reference)!.id, config });
  }
  return bound;
}

function referenceOf(step: WorkflowStepView): string | undefined {
  const uri = (part: unknown) =>
    typeof part === 'object' && part !== null ? (part as { uri?: string }).uri : undefined;
  return stepUri({ uri: uri(step.config) }, { uri: uri(step.extensions) });
}
