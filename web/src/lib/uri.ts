/** `svc://ai.svc.<type>/<store path>/<id>?version=<n>` references. Pure. */

export interface ResourceRef {
  /** `regulardictionary`, `behavior`, `output`, `package`, `agent`, ... */
  readonly type: string;
  /** `/agentstore/agents` */
  readonly storePath: string;
  readonly id: string;
  readonly version?: number;
}

export function parseResourceUri(uri: string | null | undefined): ResourceRef | undefined {
  if (!uri) return undefined;
  const m = /^svc:\/\/ai\.svc\.([\w.]+)(\/[^?]*)\/([^/?]+)(?:\?version=(\d+))?$/.exec(uri.trim());
  if (!m) return undefined;
  return { type: m[1]!, storePath: m[2]!, id: m[3]!, ...(m[4] !== undefined ? { version: Number(m[4]) } : {}) };
}

/** The id at the end of a Location (a resource URI, or an HTTP path). */
export function idOfLocation(location: string | null | undefined): string | undefined {
  if (!location) return undefined;
  return /\/([^/?]+)(?:\?[^/]*)?$/.exec(location.trim())?.[1];
}

export function resourceUri(type: string, storePath: string, id: string, version: number): string {
  return `svc://ai.svc.${type}${storePath}/${id}?version=${version}`;
}
