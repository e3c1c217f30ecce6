import type { TaskDefinition } from '../runtime/tasks.ts';
import type { KindName, ResourceKindDefinition } from './kinds.ts';
import { agentKind } from './schemas/agent.ts';
import { behaviorKind } from './schemas/behavior.ts';
import { dictionaryKind } from './schemas/dictionary.ts';
import { groupKind } from './schemas/group.ts';
import { httpCallsKind } from './schemas/httpcalls.ts';
import { llmKind } from './schemas/llm.ts';
import { mcpCallsKind } from './schemas/mcpcalls.ts';
import { outputKind } from './schemas/output.ts';
import { propertyKind } from './schemas/property.ts';
import { ragKind } from './schemas/rag.ts';
import { scheduleKind } from './schemas/schedule.ts';
import { transcriptKind, transcriptSuiteKind } from './schemas/transcript.ts';
import { workflowKindFor } from './schemas/workflow.ts';

/**
 * Every kind with its body contract, for one set of registered lifecycle tasks (the workflow kind is derived from
 * them). The store service, the store routes and export/import read the contracts from here.
 */
export class ResourceCatalogue {
  readonly #kinds: ReadonlyMap<string, ResourceKindDefinition>;

  constructor(tasks: readonly TaskDefinition[]) {
    const kinds: Record<KindName, ResourceKindDefinition> = {
      dictionary: dictionaryKind,
      behavior: behaviorKind,
      output: outputKind,
      workflow: workflowKindFor(tasks),
      agent: agentKind,
      property: propertyKind,
      httpcalls: httpCallsKind,
      llm: llmKind,
      mcpcalls: mcpCallsKind,
      rag: ragKind,
      transcript: transcriptKind,
      transcriptsuite: transcriptSuiteKind,
      schedule: scheduleKind,
      group: groupKind,
    };
    this.#kinds = new Map(Object.entries(kinds));
  }

  get all(): readonly ResourceKindDefinition[] {
    return [...this.#kinds.values()];
  }

  named(name: string): ResourceKindDefinition {
    const kind = this.#kinds.get(name);
    if (!kind) throw new Error(`unknown resource kind ${name}`);
    return kind;
  }
}
