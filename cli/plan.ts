import { kindNamed } from '../src/resources/kinds.ts';
import { scrubSecretFields } from '../src/security/secret-scrubbing.ts';
import { folderArchive, referenceTo, rewriteReferences, withoutOwnerFields } from './archive.ts';
import { CliError, type Api } from './connection.ts';
import { diffJson, maskSecrets, type FieldChange } from './diff.ts';
import { FolderError, readFolder, type FolderResource } from './folder.ts';
import { checkFolder } from './validate.ts';

/**
 * What applying a folder changes on the server. The server's own import preview (strategy `merge`) matches each
 * file to a resource (by origin id, else by id) and says which versions the import would write; the field-level
 * diff compares each file, its references rewritten to those versions, with the matched resource's current
 * version. Secret values never appear in a diff.
 */

export type ResourceAction = 'create' | 'update' | 'unchanged';

export interface PlannedChange {
  readonly kind: string;
  readonly file: string;
  readonly name: string;
  readonly action: ResourceAction;
  /** The resource on the server (absent for create). */
  readonly serverId?: string;
  /** The version on the server now, and the one apply leaves referenced. */
  readonly fromVersion?: number;
  readonly toVersion: number;
  readonly changes: readonly FieldChange[];
}

export interface Plan {
  readonly resources: readonly PlannedChange[];
  readonly agent: PlannedChange;
  readonly changed: boolean;
  /** The archive the plan was made from; apply imports exactly this. */
  readonly archive: Uint8Array;
  /** The folder's files it was made from. */
  readonly files: readonly FolderResource[];
}

interface PreviewedResource {
  readonly originId: string;
  readonly kind: string;
  readonly action: 'CREATE' | 'UPDATE' | 'SKIP';
  readonly targetId?: string;
  readonly targetVersion?: number;
}
interface Preview {
  readonly agent: PreviewedResource;
  readonly resources: readonly PreviewedResource[];
}

export async function loadCheckedFolder(folder: string): Promise<FolderResource[]> {
  const resources = await readFolder(folder);
  checkFolder(resources);
  return resources;
}

/** `$.a[0]["b c"]` -> `['a', 0, 'b c']` */
function parseJsonPath(path: string): (string | number)[] {
  return [...path.matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)].map(
    ([, name, index, quoted]) => name ?? (index !== undefined ? Number(index) : (JSON.parse(quoted!) as string)),
  );
}

/**
 * Runs a request whose body is the folder's archive; a problem the server names an archive file in (a
 * configuration it refuses) becomes a FolderError naming the folder's file and line.
 */
export async function inFolderTerms<T>(resources: readonly FolderResource[], request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    const problem = error instanceof CliError ? error.problem : undefined;
    const entry = typeof problem?.file === 'string' ? problem.file : undefined;
    const resource =
      entry &&
      resources.find(
        (r) =>
          entry.endsWith(`/${r.id}.${kindNamed(r.kind).exportName}.json`) ||
          entry === `${r.id}.${kindNamed(r.kind).exportName}.json`,
      );
    if (!resource) throw error;
    const path = typeof problem?.path === 'string' ? parseJsonPath(problem.path) : [];
    const message = String(problem?.detail ?? '').replace(`${entry}: `, '');
    throw new FolderError([{ file: resource.file, line: resource.lineOf(['config', ...path]), message }]);
  }
}

export async function planFolder(api: Api, folder: string): Promise<Plan> {
  const resources = await loadCheckedFolder(folder);
  const archive = folderArchive(resources);
  const preview = await inFolderTerms(resources, () =>
    api.json<Preview>('POST', '/backup/import/preview?strategy=merge', { zip: archive }),
  );
  const previewed = new Map([preview.agent, ...preview.resources].map((r) => [`${r.kind}/${r.originId}`, r] as const));
  const previewOf = (r: { kind: string; id: string }) => previewed.get(`${r.kind}/${r.id}`)!;
  const finalReference = (kind: string, id: string) => {
    const target = previewed.get(`${kind}/${id}`);
    if (!target) return undefined;
    return target.action === 'CREATE'
      ? referenceTo(kind, '(new)', 1)
      : referenceTo(kind, target.targetId!, target.targetVersion!);
  };

  const planned = await Promise.all(
    resources.map(async (resource): Promise<PlannedChange> => {
      const target = previewOf(resource);
      const { kind, file, name } = resource;
      if (target.action === 'CREATE') return { kind, file, name, action: 'create', toVersion: 1, changes: [] };
      const current = target.action === 'UPDATE' ? target.targetVersion! - 1 : target.targetVersion!;
      const { storePath } = kindNamed(kind);
      const [stored, descriptor] = await Promise.all([
        api.json<unknown>('GET', `${storePath}/${target.targetId}?version=${current}`),
        api.json<{ name: string; description: string }>('GET', `/descriptorstore/descriptors/${target.targetId}`),
      ]);
      const wanted = withoutOwnerFields(kind, rewriteReferences(resource.config, finalReference));
      const secrets = new Set(
        [...scrubSecretFields(kind, stored).scrubbed, ...scrubSecretFields(kind, wanted).scrubbed].map((s) =>
          s.path.replace(/^\$/, '$.config'),
        ),
      );
      const configChanges = maskSecrets(diffJson(withoutOwnerFields(kind, stored), wanted, ['config']), secrets);
      // A new name or description is set on the resource as it is; only a configuration change makes a version.
      const changes = [
        ...diffJson(
          { name: descriptor.name, description: descriptor.description },
          { name: resource.name, description: resource.description },
        ),
        ...configChanges,
      ];
      return {
        kind,
        file,
        name,
        action: changes.length > 0 ? 'update' : 'unchanged',
        serverId: target.targetId!,
        fromVersion: current,
        toVersion: configChanges.length > 0 ? current + 1 : current,
        changes,
      };
    }),
  );
  const changed = planned.some((p) => p.action !== 'unchanged');
  const agentIndex = resources.findIndex((r) => r.kind === 'agent');
  let agent = planned[agentIndex]!;
  // An import makes a new agent version (its transcripts are bound to it), even where its own file is unchanged.
  if (changed && agent.action !== 'create') agent = { ...agent, action: 'update', toVersion: agent.fromVersion! + 1 };
  const others = planned.filter((_, i) => i !== agentIndex);
  return { resources: [...others, agent], agent, changed, archive, files: resources };
}
