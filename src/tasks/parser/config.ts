import { parseExtensionType } from '../../resources/uri.ts';

/**
 * Readers for the settings of a parser dictionary, correction or normalizer. The workflow schema (`parser-task.ts`)
 * has checked the type of each setting these read, so a reader only supplies the default.
 */

export type ConfigMap = Readonly<Record<string, unknown>>;

export function readBoolean(config: ConfigMap, name: string, fallback: boolean): boolean {
  const value = config[name];
  return typeof value === 'boolean' ? value : fallback;
}

export function readInteger(config: ConfigMap, name: string, fallback: number): number {
  const value = config[name];
  return typeof value === 'number' ? value : fallback;
}

export function readString(config: ConfigMap, name: string): string | undefined {
  const value = config[name];
  return typeof value === 'string' ? value : undefined;
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

const PARSER_PREFIX = 'ai.svc.parser.';

/** The sub-extensions of one list (`dictionaries`, `corrections`, `normalizer`), with their place for messages. */
export function readSubExtensions(
  list: readonly { readonly type: string; readonly config?: ConfigMap }[] | undefined,
  field: string,
): SubExtension[] {
  return (list ?? []).map((item, index) => {
    const where = `The parser's extensions.${field}[${index}] (${item.type})`;
    const id = parseExtensionType(item.type) ?? item.type;
    const kind = id.startsWith(PARSER_PREFIX) ? id.slice(PARSER_PREFIX.length) : id;
    return { type: item.type, kind, config: item.config ?? {}, where };
  });
}
