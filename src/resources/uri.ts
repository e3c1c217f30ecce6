import { isId } from '../ids.ts';

/**
 * Resource references: `svc://ai.svc.<type>/<store path>/<id>?version=<n>`.
 * As upstream does, a reference is resolved by its type host, its trailing id and its version; the store path in
 * between is informative only.
 */
export interface ResourceReference {
  /** The type host without the `ai.svc.` prefix, as written (may be an alias such as `rules`). */
  readonly type: string;
  readonly id: string;
  readonly version: number;
}

const REFERENCE = /^svc:\/\/ai\.svc\.([A-Za-z][\w.-]*)\/(?:[\w.-]+\/)*([^/?#]+)\?version=(\d+)$/;

export function parseReference(uri: string): ResourceReference | undefined {
  const match = REFERENCE.exec(uri);
  if (!match) return undefined;
  const [, type, id, version] = match as unknown as [string, string, string, string];
  const versionNumber = Number(version);
  if (!isId(id) || versionNumber < 1 || !Number.isSafeInteger(versionNumber)) return undefined;
  return { type, id, version: versionNumber };
}

export function formatReference(uriType: string, storePath: string, id: string, version: number): string {
  return `svc://ai.svc.${uriType}${storePath}/${id}?version=${version}`;
}

/** A task or extension type: `svc://ai.svc.<name>` with no path. */
export function parseExtensionType(type: string): string | undefined {
  const match = /^svc:\/\/(ai\.svc\.[A-Za-z][\w.]*)$/.exec(type);
  return match?.[1];
}
