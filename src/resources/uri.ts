import { isId } from '../ids.ts';

/**
 * Resource references: `svc://ai.svc.<type>/<store path>/<id>?version=<n>`.
 * As upstream does, a reference is resolved by its type host, its trailing id and its version; the store path in
 * between is informative only.
 *
 * The one place that decides a spelling (DESIGN §4.22): the original service writes `eddi://ai.labs.` where the spec
 * writes `svc://ai.svc.`; both are read everywhere a reference or a type is, and only ours is ever written. Older
 * type names (`package`, `bot`, `rules`, ...) are the kinds table's and the tasks' aliases.
 */
export interface ResourceReference {
  /** The type host without the `ai.svc.` prefix, as written (may be an alias such as `rules`). */
  readonly type: string;
  readonly id: string;
  readonly version: number;
}

/** Our spelling of a type: `svc://ai.svc.<name>`. */
export const TYPE_PREFIX = 'svc://ai.svc.';

/** The scheme and namespace of a type or reference, in either spelling. */
const SPELLING = String.raw`(?:svc:\/\/ai\.svc\.|eddi:\/\/ai\.labs\.)`;

const REFERENCE = new RegExp(String.raw`^${SPELLING}([A-Za-z][\w.-]*)\/(?:[\w.-]+\/)*([^/?#]+)\?version=(\d+)$`);
const EXTENSION_TYPE = new RegExp(String.raw`^${SPELLING}([A-Za-z][\w.]*)$`);

/**
 * A reference's parts as written, in either spelling, without judging the id (archives from other stores carry
 * other id forms); `undefined` unless it has the reference shape and a version from 1 up.
 */
export function splitReference(uri: string): ResourceReference | undefined {
  const match = REFERENCE.exec(uri);
  if (!match) return undefined;
  const [, type, id, version] = match as unknown as [string, string, string, string];
  const versionNumber = Number(version);
  if (versionNumber < 1 || !Number.isSafeInteger(versionNumber)) return undefined;
  return { type, id, version: versionNumber };
}

/** A reference to a resource of this service (24 hex id), in either spelling. */
export function parseReference(uri: string): ResourceReference | undefined {
  const reference = splitReference(uri);
  return reference && isId(reference.id) ? reference : undefined;
}

export function formatReference(uriType: string, storePath: string, id: string, version: number): string {
  return `${TYPE_PREFIX}${uriType}${storePath}/${id}?version=${version}`;
}

/**
 * A task or extension type (`svc://ai.svc.<name>` or `eddi://ai.labs.<name>`, no path) as its id in our
 * namespace: `ai.svc.<name>`.
 */
export function parseExtensionType(type: string): string | undefined {
  const match = EXTENSION_TYPE.exec(type);
  return match ? `ai.svc.${match[1]}` : undefined;
}

/** A type in our spelling (`svc://ai.svc.<name>`); anything that is not a type is returned unchanged. */
export function canonicalExtensionType(type: unknown): unknown {
  const id = typeof type === 'string' ? parseExtensionType(type) : undefined;
  return id === undefined ? type : `svc://${id}`;
}
