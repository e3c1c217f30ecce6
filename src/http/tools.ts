import { Type, type Static } from '@sinclair/typebox';
import { notFound } from '../errors.ts';
import type { ToolHistory } from '../llm/tool-history.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Tool history of the LLM tasks (`/llm/tools`; `/langchain/tools` is rewritten here): costs, the result cache and
 * its TTLs, rate limits per tool, and the tool calls of a conversation. A tool is known once it is built in or
 * was offered to a model; other names answer 404.
 */

const ToolParams = Type.Object({ tool: Type.String({ description: 'tool name, e.g. calculator' }) });
const ConversationParams = Type.Object({ conversationId: Type.String() });
const IdParams = Type.Object({ id: Type.String({ description: 'conversation id' }) });
const Message = Type.Object({ message: Type.String() });

const Tally = Type.Object({ calls: Type.Integer(), totalCost: Type.Number() });
const CostsResponse = Type.Object(
  {
    totalCost: Type.Number({ description: 'USD, from the built-in price table (0 where unknown)' }),
    summary: Type.Object({
      toolCalls: Type.Integer(),
      modelCalls: Type.Integer(),
      conversations: Type.Integer(),
      tools: Type.Record(Type.String(), Tally),
      models: Type.Record(
        Type.String(),
        Type.Object({
          calls: Type.Integer(),
          inputTokens: Type.Integer(),
          outputTokens: Type.Integer(),
          totalCost: Type.Number(),
        }),
      ),
    }),
  },
  { title: 'ToolCosts' },
);
const ToolCosts = Type.Object({
  tool: Type.String(),
  calls: Type.Integer(),
  totalCost: Type.Number(),
  averageCost: Type.Number(),
});
const ConversationCosts = Type.Object({
  conversationId: Type.String(),
  totalCost: Type.Number(),
  toolCalls: Type.Integer(),
  modelCalls: Type.Integer(),
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  tools: Type.Record(Type.String(), Tally),
});
const CacheStats = Type.Object({
  size: Type.Integer(),
  maxSize: Type.Integer(),
  hits: Type.Integer(),
  misses: Type.Integer(),
  hitRate: Type.Number(),
  evictions: Type.Integer(),
  entriesByTool: Type.Record(Type.String(), Type.Integer()),
});
const TtlInfo = Type.Object({
  tool: Type.String(),
  ttlSeconds: Type.Integer(),
  overridden: Type.Boolean({ description: 'set through this API (else the default)' }),
});
const TtlBody = Type.Object(
  { ttlSeconds: Type.Integer({ minimum: 0, maximum: 31_536_000, description: '0 = do not cache' }) },
  { additionalProperties: false },
);
const RateLimitInfo = Type.Object({
  tool: Type.String(),
  limit: Type.Integer({ description: 'calls per minute' }),
  remaining: Type.Integer(),
  resetTimeMs: Type.Integer({ description: 'milliseconds until the bucket is full again' }),
});
const RateLimitBody = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'calls per minute' }) },
  { additionalProperties: false },
);
const ToolCall = Type.Object({
  tool: Type.String(),
  conversationId: Type.String(),
  arguments: Type.Unknown(),
  result: Type.String(),
  cached: Type.Boolean(),
  rateLimited: Type.Boolean(),
  error: Type.Optional(Type.String()),
  cost: Type.Number(),
  durationMs: Type.Integer(),
  timestamp: Type.Integer({ description: 'epoch milliseconds' }),
});

export async function toolRoutes(app: TypedApp, deps: { tools: ToolHistory }): Promise<void> {
  const { tools } = deps;
  const tags = ['LLM tools'];
  const knownTool = ({ tool }: Static<typeof ToolParams>): string => {
    if (!tools.isKnown(tool)) throw notFound(`No tool named '${tool}'; known tools: ${tools.knownTools.join(', ')}.`);
    return tool;
  };

  app.get(
    '/llm/tools/costs',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: 'Total cost and a summary per tool and model', response: { 200: CostsResponse } },
    },
    async () => tools.costs.summary(),
  );

  app.post(
    '/llm/tools/costs/reset',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: 'Forget every recorded cost', response: { 200: Message } },
    },
    async () => {
      tools.costs.reset();
      return { message: 'Costs reset successfully' };
    },
  );

  app.get(
    '/llm/tools/costs/conversation/:id',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Costs of one conversation (zero when it made no calls)',
        params: IdParams,
        response: { 200: ConversationCosts },
      },
    },
    async (request) => tools.costs.conversation(request.params.id),
  );

  app.get(
    '/llm/tools/costs/tool/:tool',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: 'Costs of one tool', params: ToolParams, response: { 200: ToolCosts } },
    },
    async (request) => tools.costs.tool(knownTool(request.params)),
  );

  app.delete(
    '/llm/tools/cache',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: 'Clear the tool result cache', response: { 200: Message } },
    },
    async () => {
      tools.cache.clear();
      return { message: 'Cache cleared successfully' };
    },
  );

  app.get(
    '/llm/tools/cache/stats',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: 'Cache statistics', response: { 200: CacheStats } },
    },
    async () => tools.cache.stats(),
  );

  app.get(
    '/llm/tools/cache/ttl/:tool',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: "A tool's cache lifetime", params: ToolParams, response: { 200: TtlInfo } },
    },
    async (request) => tools.cache.ttl(knownTool(request.params)),
  );

  app.put(
    '/llm/tools/cache/ttl/:tool',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "Change a tool's cache lifetime (its cached results are dropped)",
        params: ToolParams,
        body: TtlBody,
        response: { 200: TtlInfo },
      },
    },
    async (request) => tools.cache.setTtl(knownTool(request.params), request.body.ttlSeconds),
  );

  app.get(
    '/llm/tools/ratelimit/:tool',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "A tool's rate limit and what is left of it",
        params: ToolParams,
        response: { 200: RateLimitInfo },
      },
    },
    async (request) => tools.rateLimits.info(knownTool(request.params)),
  );

  app.put(
    '/llm/tools/ratelimit/:tool',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "Change a tool's rate limit (calls per minute; the bucket starts full)",
        params: ToolParams,
        body: RateLimitBody,
        response: { 200: RateLimitInfo },
      },
    },
    async (request) => tools.rateLimits.setLimit(knownTool(request.params), request.body.limit),
  );

  app.post(
    '/llm/tools/ratelimit/:tool/reset',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: "Refill a tool's rate-limit bucket",
        params: ToolParams,
        response: { 200: RateLimitInfo },
      },
    },
    async (request) => tools.rateLimits.reset(knownTool(request.params)),
  );

  app.get(
    '/llm/tools/history/:conversationId',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'The tool calls of a conversation, oldest first',
        params: ConversationParams,
        response: { 200: Type.Array(ToolCall) },
      },
    },
    async (request) => tools.history(request.params.conversationId),
  );
}
