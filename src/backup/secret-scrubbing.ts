import { isObject } from '../resources/schemas/common.ts';
import { hasVaultReference } from '../security/secret-references.ts';
import { needsRendering } from '../templating/engine.ts';
import { formatJsonPath, type JsonPath } from './references.ts';

/**
 * Keeps secret values out of exports (DESIGN §4.10, reference §12.3). Vault references (`${vault:NAME}`) are
 * pointers and stay; any other value of a secret-bearing field is replaced by an empty string:
 * - LLM task parameters named like a credential (`apiKey`, `secretAccessKey`, `token`, `password`, ...);
 * - HTTP-call request headers named like a credential (`Authorization`, `X-Api-Key`, `Cookie`, ...), unless the
 *   value is a template (`Bearer {properties.token}` holds no secret itself);
 * - agent channel settings (`appSecret`, `verificationToken`, `pageAccessToken`, and anything named like those).
 */

const SECRET_PARAMETER = /(api[-_]?key|secret|token|password|passwd|access[-_]?key|credential)/i;
const SECRET_HEADER = /(authorization|cookie|api[-_]?key|token|secret|password|credential|auth)/i;

export interface ScrubbedField {
  readonly path: string;
}

function keep(value: string, templatesAllowed: boolean): boolean {
  return value === '' || hasVaultReference(value) || (templatesAllowed && needsRendering(value));
}

function scrubMap(map: unknown, at: JsonPath, pattern: RegExp, templatesAllowed: boolean, scrubbed: ScrubbedField[]): void {
  if (!isObject(map)) return;
  for (const [name, value] of Object.entries(map)) {
    if (typeof value !== 'string' || !pattern.test(name) || keep(value, templatesAllowed)) continue;
    map[name] = '';
    scrubbed.push({ path: formatJsonPath([...at, name]) });
  }
}

function eachOf(list: unknown, visit: (item: Record<string, unknown>, index: number) => void): void {
  if (Array.isArray(list)) list.forEach((item, index) => isObject(item) && visit(item, index));
}

/** Returns a scrubbed copy of a body of `kind` and the JSON paths of the values removed. */
export function scrubSecrets(kind: string, body: unknown): { body: unknown; scrubbed: ScrubbedField[] } {
  const copy = structuredClone(body);
  const scrubbed: ScrubbedField[] = [];
  if (!isObject(copy)) return { body: copy, scrubbed };
  if (kind === 'llm') {
    eachOf(copy['tasks'], (task, i) => scrubMap(task['parameters'], ['tasks', i, 'parameters'], SECRET_PARAMETER, false, scrubbed));
  } else if (kind === 'httpcalls') {
    eachOf(copy['httpCalls'], (call, i) => {
      if (isObject(call['request'])) scrubMap(call['request']['headers'], ['httpCalls', i, 'request', 'headers'], SECRET_HEADER, true, scrubbed);
    });
  } else if (kind === 'agent') {
    eachOf(copy['channels'], (channel, i) => scrubMap(channel['config'], ['channels', i, 'config'], SECRET_PARAMETER, false, scrubbed));
  }
  return { body: copy, scrubbed };
}
