import { resourceKinds } from './kinds.ts';

/**
 * The original service's agents that build agents (Bot Father 1.x to 3.x) call its REST API through HTTP calls and
 * cut the new resource's id and version out of the `Location` it answered, by position:
 * `#strings.substring(properties.packageLocation, 45, 69)` and `#strings.substring(properties.packageLocation, 78)`
 * for `eddi://ai.labs.package/packagestore/packages/<24-character id>?version=<n>`. This service answers locations
 * spelled `svc://ai.svc.<type>/...`, where those positions fall elsewhere. So such a call — a 24-character span
 * starting where the id starts in one of the original's locations, or the rest from where its version starts —
 * becomes `#uuidUtils.extractId(x)` or `#uuidUtils.extractVersion(x)`, which read a location in any spelling. Run
 * before the Thymeleaf helper migration (which turns `#uuidUtils.` into `uuidUtils:`).
 */

/** The original's resource URI scheme and namespace. */
const ORIGINAL_PREFIX = 'eddi://ai.labs.';
const ID_LENGTH = 24;
const VERSION_QUERY = '?version=';

/** Where the id starts in each location the original answered (every type name and store path of every kind). */
const ID_POSITIONS: ReadonlySet<number> = new Set(
  resourceKinds.flatMap((kind) =>
    [kind.uriType, ...kind.uriTypeAliases].flatMap((type) =>
      [kind.storePath, ...kind.legacyStorePaths].map((path) => `${ORIGINAL_PREFIX}${type}${path}/`.length),
    ),
  ),
);

/** `#strings.substring(target, from)` or `#strings.substring(target, from, to)` with literal positions. */
const POSITIONAL_SUBSTRING = /#strings\.substring\(\s*([\w.]+)\s*,\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)/g;

export function migrateLocationSubstrings(text: string): string {
  if (!text.includes('#strings.substring(')) return text;
  return text.replace(POSITIONAL_SUBSTRING, (whole, target: string, fromText: string, toText: string | undefined) => {
    const from = Number(fromText);
    if (toText === undefined) {
      const idStart = from - ID_LENGTH - VERSION_QUERY.length;
      return ID_POSITIONS.has(idStart) ? `#uuidUtils.extractVersion(${target})` : whole;
    }
    return Number(toText) - from === ID_LENGTH && ID_POSITIONS.has(from) ? `#uuidUtils.extractId(${target})` : whole;
  });
}
