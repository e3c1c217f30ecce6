import { DeploymentError } from '../../runtime/tasks.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * Readers for the parser's configuration values. Configuration maps hold scalars; upstream exports often carry
 * booleans and numbers as strings (`"true"`, `"2"`), so those are accepted too. Anything else is a deployment
 * error that names the setting and where it was found.
 */

export type ConfigMap = Readonly<Record<string, unknown>>;

export function readBoolean(config: ConfigMap, name: string, fallback: boolean, where: string): boolean {
  const value = config[name];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw new DeploymentError(`${where}: '${name}' must be true or false, not ${JSON.stringify(value)}.`);
}

export function readInteger(config: ConfigMap, name: string, fallback: number, minimum: number, where: string): number {
  const value = config[name];
  if (value === undefined || value === null || value === '') return fallback;
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < minimum) {
    throw new DeploymentError(`${where}: '${name}' must be an integer of at least ${minimum}, not ${JSON.stringify(value)}.`);
  }
  return number;
}

export function readString(config: ConfigMap, name: string, where: string): string | undefined {
  const value = config[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new DeploymentError(`${where}: '${name}' must be a string, not ${JSON.stringify(value)}.`);
  return value;
}

/** One `{type, config}` element of `extensions.dictionaries|corrections|normalizer`. */
export interface SubExtension {
  /** The type as written, for messages. */
  readonly type: string;
  /** The type without scheme and `ai.svc.parser.` prefix, e.g. `dictionaries.integer`. */
  readonly kind: string;
  readonly config: ConfigMap;
  /** Where it sits, e.g. `extensions.corrections[1]`, for messages. */
  readonly where: string;
}

const TYPE_PREFIX = /^(?:(?:svc|eddi):\/\/)?ai\.(?:svc|labs)\.parser\./;

/** The sub-extensions of one list (`dictionaries`, `corrections`, `normalizer`), with their place for messages. */
export function readSubExtensions(list: readonly { readonly type: string; readonly config?: ConfigMap }[] | undefined, field: string): SubExtension[] {
  return (list ?? []).map((item, index) => {
    const where = `The parser's extensions.${field}[${index}] (${item.type})`;
    return { type: item.type, kind: item.type.replace(TYPE_PREFIX, ''), config: item.config ?? {}, where };
  });
}
