/**
 * The import preview answer (`{strategy, agent, resources[], ignoredEntries[]}`, each resource
 * `{originId, kind, name, action, targetId?, targetVersion?}`) -> table rows. Tolerates a bare list. Pure.
 */

export interface PreviewRow {
  readonly label: string;
  readonly action: string;
  readonly originId?: string;
  readonly target?: string;
}

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);

function row(item: unknown): PreviewRow[] {
  if (!item || typeof item !== 'object') return [];
  const o = item as Record<string, unknown>;
  const action = text(o.action) ?? text(o.operation) ?? '?';
  const kind = (text(o.kind) ?? text(o.type) ?? '').replace(/^svc:\/\/ai\.svc\./, '');
  const name = text(o.name) ?? '';
  const originId = text(o.originId) ?? text(o.origin);
  const label = [kind, name].filter(Boolean).join(': ') || originId || 'resource';
  const target = text(o.targetId)
    ? `${text(o.targetId)}${text(o.targetVersion) ? ` v${text(o.targetVersion)}` : ''}`
    : undefined;
  return [{ label, action: action.toUpperCase(), ...(originId ? { originId } : {}), ...(target ? { target } : {}) }];
}

export function previewRows(data: unknown): PreviewRow[] {
  if (Array.isArray(data)) return data.flatMap(row);
  if (!data || typeof data !== 'object') return [];
  const o = data as Record<string, unknown>;
  return [...row(o.agent), ...(Array.isArray(o.resources) ? o.resources.flatMap(row) : [])];
}

export function ignoredEntries(data: unknown): string[] {
  const list = data && typeof data === 'object' ? (data as { ignoredEntries?: unknown }).ignoredEntries : undefined;
  return Array.isArray(list) ? list.map(String) : [];
}
