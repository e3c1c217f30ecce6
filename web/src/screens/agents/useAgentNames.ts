/** Agent id -> name, from the agent descriptors (shared by screens that show agent ids). */
import { useQuery } from '@tanstack/react-query';
import { useResourceKinds } from '../../api/resources.ts';
import type { Descriptor } from '../../api/types.ts';
import { useAuth } from '../../auth.tsx';
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
