import { t } from '../i18n/index.ts';
import { useQuery } from '@tanstack/react-query';
import { useAuth } from '../auth.tsx';

/** A configuration kind as the service describes it (`GET /resourcekinds`; the table is `src/resources/kinds.ts`). */
export interface ResourceKind {
  readonly name: string;
  /** Route segment, e.g. `dictionaries`. */
  readonly slug: string;
  /** One resource, for people: `dictionary`, `behavior set`, ... */
  readonly title: string;
  /** The list, for people. */
  readonly label: string;
  /** `svc://ai.svc.<uriType>/...` */
  readonly uriType: string;
  readonly storePath: string;
  /** A minimal valid body for "new". */
  readonly template: unknown;
}

/** The kinds, and the look-ups the screens need. Pure. */
export interface ResourceKinds {
  /** The configuration kinds a workflow uses, in the service's order (agents have their own screens). */
  readonly configuration: readonly ResourceKind[];
  readonly agent: ResourceKind;
  /** By internal name (`dictionary`, `workflow`, ...); throws for a name the service does not describe. */
  named(name: string): ResourceKind;
  bySlug(slug: string): ResourceKind | undefined;
  byStorePath(storePath: string): ResourceKind | undefined;
}

export function resourceKindsOf(kinds: readonly ResourceKind[]): ResourceKinds {
  const agent = kinds.find((kind) => kind.name === 'agent');
  if (!agent) throw new Error('the service describes no agent kind');
  return {
    configuration: kinds.filter((kind) => kind !== agent),
    agent,
    named(name) {
      const kind = kinds.find((candidate) => candidate.name === name);
      if (!kind) throw new Error(`the service describes no kind '${name}'`);
      return kind;
    },
    bySlug: (slug) => kinds.find((kind) => kind.slug === slug),
    byStorePath: (storePath) => kinds.find((kind) => kind.storePath === storePath),
  };
}

/** The kinds, fetched once per session; undefined until they arrive (or before sign-in). */
export function useResourceKinds(): ResourceKinds | undefined {
  const { api, status } = useAuth();
  const kinds = useQuery({
    queryKey: ['resourcekinds'],
    queryFn: async () => resourceKindsOf(await api.resourceKinds()),
    enabled: status === 'off' || status === 'signed-in',
    staleTime: Infinity,
  });
  return kinds.data;
}

/** Known extension types, for people. */
export const extensionLabels: Record<string, string> = {
  'svc://ai.svc.parser': t('resources.parser'),
  'svc://ai.svc.behavior': t('resources.behaviorRules'),
  'svc://ai.svc.property': t('resources.propertySetter'),
  'svc://ai.svc.httpcalls': 'HTTP calls',
  'svc://ai.svc.llm': 'LLM',
  'svc://ai.svc.output': t('resources.output'),
  'svc://ai.svc.templating': t('resources.templating'),
};

export const environments = ['production', 'test'] as const;
