import { AppError, invalid } from '../errors.ts';
import type { ResourceCatalogue } from '../resources/catalogue.ts';
import { kindNamed, type KindName } from '../resources/kinds.ts';
import { AGENT_FILE_PATTERN, classifyEntry, descriptorFileName } from './layout.ts';
import { readBody } from '../resources/upstream-migrations.ts';
import { formatJsonPath, parseLooseReference, referenceSlots, type JsonPath } from './references.ts';
import { isRecord, nestsDeeperThan } from '../shared/json.ts';

/**
 * An import archive read into a graph: the agent, the workflows it references and the resources those reference,
 * each body already migrated (legacy templates, vault syntax) and translated to the spec's names, with its
 * references resolved to other nodes of the archive. Reading checks the layout, the JSON of every file used and
 * that no reference dangles; validation of the bodies happens when the import is planned (references rewritten).
 */

export interface ArchiveReference {
  readonly path: JsonPath;
  readonly key: string;
}

export interface ArchiveNode {
  /** `<kind>/<originId>/<version>`: one node per resource version, however many files reference it. */
  readonly key: string;
  readonly kind: string;
  /** The id the resource has in the archive (its origin id once imported). */
  readonly originId: string;
  readonly originVersion: number;
  /** The archive entry the body came from. */
  readonly file: string;
  readonly name: string;
  readonly description: string;
  /** Whether the archive holds a descriptor for it (else name and description are empty, not given). */
  readonly described: boolean;
  /** Spec-named body; references still as written in the archive. */
  readonly body: unknown;
  readonly references: readonly ArchiveReference[];
  /** Structural position (`agent/workflow[0]/dictionary[1]`), matched by the `upgrade` strategy. */
  readonly slot: string;
}

export interface Archive {
  readonly agent: ArchiveNode;
  /** Children before their parents, then the agent, then what the agent owns (transcripts). */
  readonly nodes: readonly ArchiveNode[];
  /** Entries the import does not use. */
  readonly ignoredEntries: readonly string[];
}

/**
 * Whether a reference that names `target` is followed: it names the kind its place asks for, or, where any kind
 * may be named, a resource of a workflow step (others are left for validation to report).
 */
function follows(expected: KindName | undefined, target: KindName): boolean {
  return expected === undefined ? target !== 'agent' && target !== 'workflow' : target === expected;
}

export const childSlot = (parent: string, kind: string, ordinal: number) => `${parent}/${kind}[${ordinal}]`;

function withFile(file: string, error: unknown): unknown {
  if (error instanceof AppError && error.kind === 'invalid') {
    return invalid(`${file}: ${error.message}`, { ...error.details, file });
  }
  return error;
}

function findAgentFile(names: readonly string[]): { name: string; base: string } {
  const candidates = names.filter((name) => !name.startsWith('__MACOSX/') && AGENT_FILE_PATTERN.test(name));
  if (candidates.length === 0) {
    throw invalid('The ZIP holds no agent file (<agentId>.agent.json); it is not an agent export.', { path: 'body' });
  }
  if (candidates.length > 1) {
    throw invalid(
      `The ZIP holds more than one agent file (${candidates.slice(0, 3).join(', ')}); export one agent per archive.`,
      { path: 'body' },
    );
  }
  const name = candidates[0]!;
  return { name, base: AGENT_FILE_PATTERN.exec(name)![1]! };
}

/** `maxJsonDepth`: files nesting arrays and objects deeper are refused before they are parsed. */
export function readArchive(
  files: ReadonlyMap<string, Uint8Array>,
  catalogue: ResourceCatalogue,
  maxJsonDepth: number,
): Archive {
  const { name: agentEntry, base } = findAgentFile([...files.keys()]);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const used = new Set<string>();
  /** `<kind>|<folder>|<id>` and `<kind>|<id>` -> entry names. */
  const byFolder = new Map<string, string>();
  const byId = new Map<string, string[]>();
  for (const name of files.keys()) {
    if (!name.startsWith(base)) continue;
    const entry = classifyEntry(name.slice(base.length));
    if (entry.role !== 'resource') continue;
    byFolder.set(`${entry.kind}|${entry.folder}|${entry.id}`, name);
    byId.set(`${entry.kind}|${entry.id}`, [...(byId.get(`${entry.kind}|${entry.id}`) ?? []), name]);
  }

  const parseJson = (name: string): unknown => {
    used.add(name);
    const bytes = files.get(name)!;
    if (nestsDeeperThan(bytes, maxJsonDepth)) {
      throw invalid(
        `${name}: the file nests arrays and objects deeper than ${maxJsonDepth} levels (svc.http.max-json-depth).`,
        { path: '$', file: name },
      );
    }
    try {
      return JSON.parse(decoder.decode(bytes));
    } catch (error) {
      throw invalid(`${name}: the file is not valid JSON (${(error as Error).message}).`, { path: '$', file: name });
    }
  };
  const descriptorOf = (folder: string, id: string): { name: string; description: string; described: boolean } => {
    const entryName = base + descriptorFileName(folder, id);
    if (!files.has(entryName)) return { name: '', description: '', described: false };
    const descriptor = parseJson(entryName);
    if (!isRecord(descriptor))
      throw invalid(`${entryName}: a descriptor must be a JSON object.`, { path: '$', file: entryName });
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    return { name: text(descriptor.name), description: text(descriptor.description), described: true };
  };

  const nodes: ArchiveNode[] = [];
  const visited = new Map<string, ArchiveNode>();
  const load = (kind: string, id: string, version: number, file: string, folder: string, slot: string): ArchiveNode => {
    const key = `${kind}/${id}/${version}`;
    const seen = visited.get(key);
    if (seen) return seen;
    let body: unknown;
    try {
      body = readBody(catalogue.named(kind), parseJson(file));
    } catch (error) {
      throw withFile(file, error);
    }
    const references: ArchiveReference[] = [];
    const ordinals = new Map<string, number>();
    for (const reference of referenceSlots(catalogue.named(kind), body)) {
      const target = parseLooseReference(reference.uri);
      if (!target || !follows(reference.kind, target.kind)) continue;
      const ordinal = ordinals.get(target.kind) ?? 0;
      ordinals.set(target.kind, ordinal + 1);
      const childFile = locate(target.kind, target.id, target.version, folder);
      if (childFile === undefined) {
        throw invalid(
          `${file}: the reference '${reference.uri}' at ${formatJsonPath(reference.path)} names a ${kindNamed(target.kind).title} that is not in the ZIP.`,
          { path: formatJsonPath(reference.path), file },
        );
      }
      const childEntry = classifyEntry(childFile.slice(base.length));
      const child = load(
        target.kind,
        target.id,
        target.version,
        childFile,
        childEntry.role === 'resource' ? childEntry.folder : folder,
        childSlot(slot, target.kind, ordinal),
      );
      references.push({ path: reference.path, key: child.key });
    }
    const node: ArchiveNode = {
      key,
      kind,
      originId: id,
      originVersion: version,
      file,
      ...descriptorOf(folder, id),
      body,
      references,
      slot,
    };
    visited.set(key, node);
    nodes.push(node);
    return node;
  };
  const locate = (kind: string, id: string, version: number, folder: string): string | undefined => {
    if (kind === 'workflow') {
      const exact = byFolder.get(`workflow|${id}/${version}/|${id}`);
      if (exact) return exact;
      const all = byId.get(`workflow|${id}`) ?? [];
      return all.length === 1 ? all[0] : undefined;
    }
    return byFolder.get(`${kind}|${folder}|${id}`) ?? byId.get(`${kind}|${id}`)?.[0];
  };

  const agentId = classifyEntry(agentEntry.slice(base.length));
  const id = agentId.role === 'agent' ? agentId.id : 'agent';
  const agent = load('agent', id, agentVersionOf(files, base, id, parseJson), agentEntry, '', 'agent');
  // What belongs to the agent without being referenced (transcripts) follows it.
  const ordinals = new Map<string, number>();
  for (const name of files.keys()) {
    const entry = name.startsWith(base) ? classifyEntry(name.slice(base.length)) : undefined;
    if (entry?.role !== 'resource' || used.has(name) || !catalogue.named(entry.kind).agentOwned) continue;
    const version = Number(/\/(\d+)\/$/.exec(entry.folder)?.[1] ?? 1);
    const ordinal = ordinals.get(entry.kind) ?? 0;
    ordinals.set(entry.kind, ordinal + 1);
    load(entry.kind, entry.id, version, name, entry.folder, childSlot('agent', entry.kind, ordinal));
  }
  const ignoredEntries = [...files.keys()].filter((name) => !used.has(name) && name !== `${base}metadata.json`);
  return { agent, nodes, ignoredEntries };
}

/** The exported agent version, from its descriptor's `resource` reference (1 when unknown). */
function agentVersionOf(
  files: ReadonlyMap<string, Uint8Array>,
  base: string,
  id: string,
  parseJson: (name: string) => unknown,
): number {
  const name = base + descriptorFileName('', id);
  if (!files.has(name)) return 1;
  const descriptor = parseJson(name);
  const resource = isRecord(descriptor) && typeof descriptor.resource === 'string' ? descriptor.resource : '';
  const version = /\?version=(\d+)$/.exec(resource)?.[1];
  return version ? Number(version) : 1;
}
