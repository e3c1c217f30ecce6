import { calculate, CalculatorError, formatNumber } from './calculator.ts';
import { formatCsv, formatJson } from './data-formatter.ts';
import { summarize } from './text-summarizer.ts';
import { stringArgument, ToolFailure, type ToolDefinition } from './tool-definitions.ts';
import { fetchPageText, MAX_PAGE_TEXT } from './web-page.ts';

/**
 * The built-in tools of agent mode (reference §9.5): calculator, datetime, webscraper / fetch_page (alias
 * fetch_tool_response_page), dataformatter, textsummarizer. `builtInToolsWhitelist` selects among them; the
 * original's websearch, weather and pdfreader are not offered, and a whitelist naming them is refused when written.
 */

const calculator: ToolDefinition = {
  name: 'calculator',
  description:
    'Evaluates an arithmetic expression: + - * / % ^, parentheses, sqrt, abs, log, ln, exp, sin, cos, tan, round, floor, ceil, min, max, pow, pi, e.',
  inputSchema: {
    type: 'object',
    properties: { expression: { type: 'string', description: 'The expression, e.g. (3 + 4) * 2' } },
    required: ['expression'],
  },
  async run(args) {
    try {
      return formatNumber(calculate(stringArgument(args, 'expression')!));
    } catch (error) {
      if (error instanceof CalculatorError) throw new ToolFailure(error.message);
      throw error;
    }
  },
};

const datetime: ToolDefinition = {
  name: 'datetime',
  description: 'The current date and time, in UTC or in the given IANA time zone (e.g. Europe/Vienna).',
  inputSchema: {
    type: 'object',
    properties: { timeZone: { type: 'string', description: 'IANA time zone name; default UTC' } },
  },
  async run(args) {
    const timeZone = stringArgument(args, 'timeZone', false)?.trim() || 'UTC';
    const now = new Date();
    let local: string;
    try {
      local = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(now);
    } catch {
      throw new ToolFailure(`Unknown time zone '${timeZone}'; use an IANA name such as Europe/Vienna.`);
    }
    return JSON.stringify({ iso: now.toISOString(), timeZone, local, epochMillis: now.getTime() });
  },
};

function pageTool(name: string): ToolDefinition {
  return {
    name,
    description: `Fetches a web page and returns its readable text (at most ${MAX_PAGE_TEXT} characters).`,
    inputSchema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'http or https URL' } },
      required: ['url'],
    },
    async run(args, context) {
      try {
        return await fetchPageText(stringArgument(args, 'url')!, { web: context.web, signal: context.signal });
      } catch (error) {
        if (context.signal.aborted) throw error;
        throw new ToolFailure(error instanceof Error ? error.message : String(error));
      }
    },
  };
}

const dataformatter: ToolDefinition = {
  name: 'dataformatter',
  description: 'Pretty-prints JSON, or turns CSV into an aligned table.',
  inputSchema: {
    type: 'object',
    properties: {
      data: { type: 'string', description: 'The JSON or CSV text' },
      format: { type: 'string', enum: ['json', 'csv'], description: 'Input format; guessed when omitted' },
    },
    required: ['data'],
  },
  async run(args) {
    const data = stringArgument(args, 'data')!;
    const format = stringArgument(args, 'format', false)?.toLowerCase() ?? (/^\s*[[{]/.test(data) ? 'json' : 'csv');
    if (format === 'json') return formatJson(data);
    if (format === 'csv') return formatCsv(data);
    throw new ToolFailure(`Unknown format '${format}'; use json or csv.`);
  },
};

const textsummarizer: ToolDefinition = {
  name: 'textsummarizer',
  description: 'Shortens a text to its most important sentences (extractive summary).',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string' },
      maxSentences: { type: 'integer', minimum: 1, maximum: 20, description: 'default 3' },
    },
    required: ['text'],
  },
  async run(args) {
    const count = Number(args.maxSentences ?? 3);
    return summarize(stringArgument(args, 'text')!, Number.isInteger(count) && count > 0 ? Math.min(count, 20) : 3);
  },
};

const allTools: readonly ToolDefinition[] = [
  calculator,
  datetime,
  pageTool('webscraper'),
  pageTool('fetch_page'),
  dataformatter,
  textsummarizer,
];

/** Names of the built-in tools, for the tool-history endpoints. */
export const BUILT_IN_TOOL_NAMES: readonly string[] = allTools.map((tool) => tool.name);

const aliases: Readonly<Record<string, string>> = { fetch_tool_response_page: 'fetch_page' };

/** Built-in tools of the original service that this one does not offer. */
export const UNAVAILABLE_BUILT_IN_TOOLS: readonly string[] = ['websearch', 'weather', 'pdfreader'];

/** The tool a whitelist entry names (aliases resolved). */
export function builtInToolName(entry: string): string {
  return aliases[entry.trim()] ?? entry.trim();
}

export function builtInTools(whitelist?: readonly string[]): ToolDefinition[] {
  if (!whitelist || whitelist.length === 0) return [...allTools];
  const wanted = new Set(whitelist.map(builtInToolName));
  return allTools.filter((tool) => wanted.has(tool.name));
}
