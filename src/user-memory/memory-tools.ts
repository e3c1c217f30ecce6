import { stringArgument, ToolFailure, type ToolDefinition } from '../llm/tool-definitions.ts';
import type { UserMemoryEntry } from '../storage/user-memory-ports.ts';
import type { UserMemorySettings } from './config.ts';
import { MemoryRefusal, type MemoryReader, type UserMemoryService } from './service.ts';

/**
 * The memory tools of agent mode (the original's names): `rememberFact`, `recallMemories`, `searchMemory`,
 * `forgetFact`. Made per turn for the conversation's user, agent and group; remember and forget together make at
 * most `maxWritesPerTurn` writes a turn. Never answered from the tool cache: memory changes between calls.
 */

/** The name a `builtInToolsWhitelist` gives them by (the original's). */
export const MEMORY_TOOLS_NAME = 'usermemory';

function line(entry: UserMemoryEntry): string {
  const value = typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value);
  return `• ${entry.key} = ${value} [${entry.category}, ${entry.visibility}]`;
}

function listing(entries: readonly UserMemoryEntry[], none: string): string {
  return entries.length === 0 ? none : entries.map(line).join('\n');
}

export function memoryTools(
  service: UserMemoryService,
  reader: MemoryReader,
  settings: UserMemorySettings,
): ToolDefinition[] {
  // The model's calls of one step run concurrently: a write reserves its place before it waits for the store.
  let writes = 0;
  const reserveWrite = () => {
    if (writes >= settings.maxWritesPerTurn)
      throw new ToolFailure(`At most ${settings.maxWritesPerTurn} memory writes per turn; this one was not made.`);
    writes++;
  };
  const refusalsAsFailures = async (work: () => Promise<string>) => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof MemoryRefusal) throw new ToolFailure(error.message);
      throw error;
    }
  };
  const categories = [...settings.allowedCategories];
  const visibilities = [...settings.allowedVisibilities];
  return [
    {
      name: 'rememberFact',
      description:
        'Remembers a fact about the user for later conversations (a preference, a fact, some context). Use a short snake_case key.',
      cacheable: false,
      inputSchema: {
        type: 'object',
        properties: {
          key: { type: 'string', description: 'Short key, e.g. favorite_color' },
          value: { type: 'string', description: 'The value to remember' },
          category: { type: 'string', enum: categories, description: 'default fact' },
          visibility: {
            type: 'string',
            enum: visibilities,
            description: `self: only this agent; group: the agents of this group discussion; global: every agent of the user (default ${settings.defaultVisibility})`,
          },
        },
        required: ['key', 'value'],
      },
      run: (args) =>
        refusalsAsFailures(async () => {
          const fact = {
            key: stringArgument(args, 'key')!,
            value: stringArgument(args, 'value')!,
            category: stringArgument(args, 'category', false),
            visibility: stringArgument(args, 'visibility', false),
          };
          const write = service.factWrite(reader, fact, settings);
          reserveWrite();
          let outcome: Awaited<ReturnType<UserMemoryService['remember']>>;
          try {
            outcome = await service.remember(reader, write, settings);
          } catch (error) {
            writes--;
            throw error;
          }
          const { entry, written } = outcome;
          if (!written) {
            writes--;
            return `Already remembered (unchanged): ${entry.key}`;
          }
          return `Remembered: ${entry.key} = ${fact.value} [${entry.category}, ${entry.visibility}]`;
        }),
    },
    {
      name: 'recallMemories',
      description: 'Lists what is remembered about the user (the entries this agent may see, newest first).',
      cacheable: false,
      inputSchema: { type: 'object', properties: {} },
      run: async () => listing(await service.recall(reader, settings), 'Nothing is remembered about this user yet.'),
    },
    {
      name: 'searchMemory',
      description: 'Finds remembered facts whose key or value contains every word of the query.',
      cacheable: false,
      inputSchema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'Words to look for, e.g. color' } },
        required: ['query'],
      },
      run: async (args) =>
        listing(
          await service.recall(reader, settings, stringArgument(args, 'query')!),
          'No remembered fact matches that.',
        ),
    },
    {
      name: 'forgetFact',
      description: 'Forgets a remembered fact by its key.',
      cacheable: false,
      inputSchema: {
        type: 'object',
        properties: { key: { type: 'string', description: 'The key to forget' } },
        required: ['key'],
      },
      run: async (args) => {
        const key = stringArgument(args, 'key')!;
        reserveWrite();
        const removed = await service.forget(reader, key, settings);
        return removed === 0 ? `Nothing this agent may forget is remembered under '${key}'.` : `Forgotten: ${key}`;
      },
    },
  ];
}

/** The names of the memory tools (for `toolApprovals`). */
export const MEMORY_TOOL_NAMES: readonly string[] = ['rememberFact', 'recallMemories', 'searchMemory', 'forgetFact'];
