import { invalid } from '../errors.ts';
import type { ContextType, ContextValue } from './memory.ts';

const CONTEXT_TYPES: readonly ContextType[] = ['string', 'expressions', 'object', 'array'];

/**
 * Checks a message's context map: every entry is `{type, value}` with a known type and a value of that type
 * (`string` and `expressions` take text, `object` an object or a list, as upstream's output and quick-reply
 * contexts are lists, `array` a list). Anything else is the caller's
 * mistake (400), named by its path.
 */
export function parseContext(raw: unknown, path = 'context'): Record<string, ContextValue> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw invalid(`${path} must be an object of {type, value} entries.`, { path });
  const context: Record<string, ContextValue> = {};
  for (const [name, entry] of Object.entries(raw)) {
    const where = `${path}.${name}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw invalid(`${where} must be an object {type, value}.`, { path: where });
    }
    const { type, value } = entry as { type?: unknown; value?: unknown };
    if (typeof type !== 'string' || !CONTEXT_TYPES.includes(type as ContextType)) {
      throw invalid(`${where}.type must be one of ${CONTEXT_TYPES.join(', ')}.`, { path: `${where}.type` });
    }
    const fits =
      type === 'string' || type === 'expressions'
        ? typeof value === 'string'
        : type === 'array'
          ? Array.isArray(value)
          : value !== null && typeof value === 'object';
    if (!fits) {
      const expected = type === 'array' ? 'a list' : type === 'object' ? 'an object or a list' : 'a text';
      throw invalid(`${where}.value must be ${expected} for type ${type}.`, { path: `${where}.value` });
    }
    context[name] = { type: type as ContextType, value };
  }
  return context;
}

/** The public form of a context: name -> raw value. */
export function contextValues(context: Readonly<Record<string, ContextValue>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(context).map(([name, entry]) => [name, entry.value]));
}
