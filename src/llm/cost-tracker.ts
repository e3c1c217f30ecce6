import { LRUCache } from 'lru-cache';

/**
 * Costs of tool calls and model calls, per tool, per model and per conversation (in memory, per instance).
 */

export interface ToolCostFigures {
  readonly tool: string;
  readonly calls: number;
  readonly totalCost: number;
  readonly averageCost: number;
}

export interface ModelCostFigures {
  readonly model: string;
  readonly calls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalCost: number;
}

export interface ConversationCostFigures {
  readonly conversationId: string;
  readonly totalCost: number;
  readonly toolCalls: number;
  readonly modelCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly tools: Record<string, { calls: number; totalCost: number }>;
}

export interface CostSummary {
  readonly totalCost: number;
  readonly summary: {
    readonly toolCalls: number;
    readonly modelCalls: number;
    readonly conversations: number;
    readonly tools: Record<string, { calls: number; totalCost: number }>;
    readonly models: Record<string, { calls: number; inputTokens: number; outputTokens: number; totalCost: number }>;
  };
}

interface Tally {
  calls: number;
  totalCost: number;
}

interface ModelTally extends Tally {
  inputTokens: number;
  outputTokens: number;
}

interface ConversationTally {
  totalCost: number;
  toolCalls: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  tools: Map<string, Tally>;
}

const MAX_CONVERSATIONS = 10_000;

export class CostTracker {
  #tools = new Map<string, Tally>();
  #models = new Map<string, ModelTally>();
  readonly #conversations = new LRUCache<string, ConversationTally>({ max: MAX_CONVERSATIONS });

  recordToolCall(conversationId: string, tool: string, cost: number): void {
    add(this.#tools, tool, cost);
    const conversation = this.#conversation(conversationId);
    conversation.toolCalls++;
    conversation.totalCost += cost;
    add(conversation.tools, tool, cost);
  }

  recordModelCall(
    conversationId: string,
    model: string,
    inputTokens: number,
    outputTokens: number,
    cost: number,
  ): void {
    const tally = this.#models.get(model) ?? { calls: 0, totalCost: 0, inputTokens: 0, outputTokens: 0 };
    tally.calls++;
    tally.totalCost += cost;
    tally.inputTokens += inputTokens;
    tally.outputTokens += outputTokens;
    this.#models.set(model, tally);
    const conversation = this.#conversation(conversationId);
    conversation.modelCalls++;
    conversation.totalCost += cost;
    conversation.inputTokens += inputTokens;
    conversation.outputTokens += outputTokens;
  }

  summary(): CostSummary {
    let totalCost = 0;
    let toolCalls = 0;
    let modelCalls = 0;
    const tools: CostSummary['summary']['tools'] = {};
    for (const [name, tally] of this.#tools) {
      tools[name] = { calls: tally.calls, totalCost: tally.totalCost };
      totalCost += tally.totalCost;
      toolCalls += tally.calls;
    }
    const models: CostSummary['summary']['models'] = {};
    for (const [name, tally] of this.#models) {
      models[name] = {
        calls: tally.calls,
        inputTokens: tally.inputTokens,
        outputTokens: tally.outputTokens,
        totalCost: tally.totalCost,
      };
      totalCost += tally.totalCost;
      modelCalls += tally.calls;
    }
    return { totalCost, summary: { toolCalls, modelCalls, conversations: this.#conversations.size, tools, models } };
  }

  tool(tool: string): ToolCostFigures {
    const tally = this.#tools.get(tool) ?? { calls: 0, totalCost: 0 };
    return {
      tool,
      calls: tally.calls,
      totalCost: tally.totalCost,
      averageCost: tally.calls === 0 ? 0 : tally.totalCost / tally.calls,
    };
  }

  conversation(conversationId: string): ConversationCostFigures {
    const tally = this.#conversations.get(conversationId);
    const tools: ConversationCostFigures['tools'] = {};
    for (const [name, tool] of tally?.tools ?? []) tools[name] = { calls: tool.calls, totalCost: tool.totalCost };
    return {
      conversationId,
      totalCost: tally?.totalCost ?? 0,
      toolCalls: tally?.toolCalls ?? 0,
      modelCalls: tally?.modelCalls ?? 0,
      inputTokens: tally?.inputTokens ?? 0,
      outputTokens: tally?.outputTokens ?? 0,
      tools,
    };
  }

  reset(): void {
    this.#tools = new Map();
    this.#models = new Map();
    this.#conversations.clear();
  }

  #conversation(conversationId: string): ConversationTally {
    let tally = this.#conversations.get(conversationId);
    if (!tally) {
      tally = { totalCost: 0, toolCalls: 0, modelCalls: 0, inputTokens: 0, outputTokens: 0, tools: new Map() };
      this.#conversations.set(conversationId, tally);
    }
    return tally;
  }
}

function add(tallies: Map<string, Tally>, name: string, cost: number): void {
  const tally = tallies.get(name) ?? { calls: 0, totalCost: 0 };
  tally.calls++;
  tally.totalCost += cost;
  tallies.set(name, tally);
}
