/** Agent id -> name, from the agent descriptors (shared by screens that show agent ids). */
import { useQuery } from '@tanstack/react-query';
import { useResourceKinds } from '../../api/resources.ts';
import type { Descriptor } from '../../api/types.ts';
import { useAuth } from '../../auth.tsx';
import { t } from '../../i18n/index.ts';
import { parseResourceUri } from '../../lib/uri.ts';

export function useAgentDescriptors() {
  const { api } = useAuth();
  const agentPath = useResourceKinds()?.agent.storePath;
  return useQuery({
    queryKey: ['descriptors', agentPath, ''],
    queryFn: () => api.descriptors(agentPath!, { limit: 1000 }),
    enabled: agentPath !== undefined,
  });
}

export function useAgentNames(): Map<string, string> {
  const { data } = useAgentDescriptors();
  return namesOf(data ?? []);
}

export function namesOf(descriptors: readonly Descriptor[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const d of descriptors) {
    const ref = parseResourceUri(d.resource);
    if (ref) names.set(ref.id, d.name ?? '');
  }
  return names;
}

/** An agent for people: its name, or "Unnamed agent …<end of its id>" (in plain text, e.g. an option). */
export function agentLabel(names: ReadonlyMap<string, string>, agentId: string): string {
  return names.get(agentId) || t('agent.unnamedWithId', { id: agentId.slice(-8) });
}
