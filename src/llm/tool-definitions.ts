import type { JSONSchema7 } from 'ai';
import type { WebAccess } from './web-page.ts';

/** A tool the model may call: a name, a description, a JSON schema of its arguments and what it does. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JSONSchema7;
  /** false for tools whose calls may act on the world (another service's tools): never answered from the cache. */
  readonly cacheable?: boolean;
  /** Returns the text handed back to the model; throws when the call fails (the model then sees the error). */
  run(args: Record<string, unknown>, context: ToolRunContext): Promise<string>;
}

export interface ToolRunContext {
  readonly signal: AbortSignal;
  readonly web: WebAccess;
}

/** A tool failure whose message the model may see. */
export class ToolFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolFailure';
  }
}

export function stringArgument(args: Record<string, unknown>, name: string, required = true): string | undefined {
  const value = args[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === undefined || value === null) {
    if (required) throw new ToolFailure(`The argument '${name}' is missing.`);
    return undefined;
  }
  return JSON.stringify(value);
}

/** Tool names are `[a-z0-9_]`, at most 64 characters (what every provider accepts). */
export function toolName(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_|_$/g, '')
      .slice(0, 64) || 'tool'
  );
}
