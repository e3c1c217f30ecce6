import { AppError, conflict, invalid, notFound } from '../errors.ts';
import { isId, newId } from '../ids.ts';
import type { ResourceCatalogue } from '../resources/catalogue.ts';
import { kindNamed, kindOfUriType, type ResourceKindDefinition } from '../resources/kinds.ts';
import { formatReference, parseReference } from '../resources/uri.ts';
import { canonicalJson } from '../shared/json.ts';
import type { ConfigResourceStore, DescriptorChanges } from '../storage/ports.ts';
import { childSlot, type Archive, type ArchiveNode } from './archive.ts';
import { referenceSlots, rewriteAt } from './references.ts';

/**
 * Decides, without writing anything, what an import does with every resource of an archive:
 * - `create`: everything is created anew;
 * - `merge`: a resource whose origin id (or own id) is known here is updated, others are created;
 * - `upgrade`: the target agent's resources are matched by position (workflows by their place in the agent,
 *   resources by kind and place in their workflow) and updated.
 * A matched resource whose content is unchanged (or that is left out of `selectedResources`) is skipped and
 * referenced at its current version; a matched agent always gets a new version. A merge also gives matched resources
 * the name and description of their descriptors in the archive. Every body is validated with its
 * references rewritten to their final URIs, so that a plan that validates can be written as it is.
 */

export const STRATEGIES = ['create', 'merge', 'upgrade'] as const;
export type ImportStrategy = (typeof STRATEGIES)[number];
export type ImportAction = 'CREATE' | 'UPDATE' | 'SKIP';

export interface ImportOptions {
  readonly strategy: ImportStrategy;
  /** Origin ids of the matched resources that may be updated (all when undefined). */
  readonly selectedResources?: ReadonlySet<string> | undefined;
  readonly targetAgentId?: string | undefined;
}

export interface PlannedResource {
  readonly node: ArchiveNode;
  readonly action: ImportAction;
  readonly targetId: string;
  /** The version the import leaves referenced: 1 (CREATE), current + 1 (UPDATE) or current (SKIP). */
  readonly targetVersion: number;
  /** Validated JSON text to write (CREATE, UPDATE). */
  readonly bodyJson: string;
  /** A matched resource's name and description as its descriptor in the archive gives them, where they differ. */
  readonly rename?: DescriptorChanges;
}

export interface ImportPlan {
  readonly strategy: ImportStrategy;
  /** Children before parents, then the agent, then what it owns. */
  readonly resources: readonly PlannedResource[];
  readonly agent: PlannedResource;
  readonly ignoredEntries: readonly string[];
}

interface ExistingResource {
  readonly id: string;
  readonly currentVersion: number;
}

export type Validate = (kind: ResourceKindDefinition, body: unknown) => unknown;

export async function planImport(
  archive: Archive,
  options: ImportOptions,
  store: ConfigResourceStore,
  validate: Validate,
  catalogue: ResourceCatalogue,
): Promise<ImportPlan> {
  const match = await matcher(archive, options, store, catalogue);
  const planned = new Map<string, PlannedResource>();
  const claimed = new Set<string>();
  for (const node of archive.nodes) {
    const kind = catalogue.named(node.kind);
    const finalUris = new Map<string, string>();
    for (const reference of node.references) {
      const child = planned.get(reference.key)!;
      const childKind = kindNamed(child.node.kind);
      finalUris.set(
        reference.path.join('/'),
        formatReference(childKind.uriType, childKind.storePath, child.targetId, child.targetVersion),
      );
    }
    const agent = planned.get(archive.agent.key);
    const bound =
      kind.agentOwned && agent ? kind.agentOwned.bind(node.body, agent.targetId, agent.targetVersion) : node.body;
    let body: unknown;
    try {
      body = validate(kind, rewriteAt(bound, finalUris, referenceSlots(kind, bound)));
    } catch (error) {
      if (error instanceof AppError && error.kind === 'invalid') {
        throw invalid(`${node.file}: ${error.message}`, { ...error.details, file: node.file });
      }
      throw error;
    }
    const bodyJson = JSON.stringify(body);
    const existing = await match(node);
    if (!existing || claimed.has(existing.id)) {
      planned.set(node.key, { node, action: 'CREATE', targetId: newId(), targetVersion: 1, bodyJson });
      continue;
    }
    claimed.add(existing.id);
    const currentJson = await store.read(node.kind, existing.id, existing.currentVersion);
    const isAgent = node.kind === 'agent';
    const selected = isAgent || options.selectedResources === undefined || options.selectedResources.has(node.originId);
    const unchanged = currentJson !== undefined && canonicalJson(JSON.parse(currentJson)) === canonicalJson(body);
    const skipped = currentJson === undefined || (!isAgent && (unchanged || !selected));
    // Merge makes the matched resources what the archive says, names included; upgrade finds its agent by name.
    const renames = options.strategy === 'merge' && selected && currentJson !== undefined;
    const rename = renames ? await renameOf(store, node, existing.id) : undefined;
    planned.set(node.key, {
      node,
      action: skipped ? 'SKIP' : 'UPDATE',
      targetId: existing.id,
      targetVersion: skipped ? existing.currentVersion : existing.currentVersion + 1,
      bodyJson,
      ...(rename ? { rename } : {}),
    });
  }
  const resources = archive.nodes.map((node) => planned.get(node.key)!);
  return {
    strategy: options.strategy,
    resources,
    agent: planned.get(archive.agent.key)!,
    ignoredEntries: archive.ignoredEntries,
  };
}

/** The archive's name and description of a matched resource where its descriptor gives others than the stored ones. */
async function renameOf(
  store: ConfigResourceStore,
  node: ArchiveNode,
  id: string,
): Promise<DescriptorChanges | undefined> {
  if (!node.described) return undefined;
  const stored = await store.descriptor(node.kind, id);
  if (!stored || (stored.name === node.name && stored.description === node.description)) return undefined;
  return { name: node.name, description: node.description };
}

type Matcher = (node: ArchiveNode) => Promise<ExistingResource | undefined>;

async function liveResource(
  store: ConfigResourceStore,
  kind: string,
  id: string,
): Promise<ExistingResource | undefined> {
  if (!isId(id)) return undefined;
  const record = await store.descriptor(kind, id);
  return record && !record.deleted ? { id: record.id, currentVersion: record.currentVersion } : undefined;
}

async function targetAgent(store: ConfigResourceStore, targetAgentId: string): Promise<ExistingResource> {
  if (!isId(targetAgentId))
    throw invalid(`targetAgentId '${targetAgentId}' is not a resource id (24 lower-case hex characters).`, {
      path: 'targetAgentId',
    });
  const agent = await liveResource(store, 'agent', targetAgentId);
  if (!agent) throw notFound(`No agent with id ${targetAgentId} (targetAgentId).`);
  return agent;
}

async function matcher(
  archive: Archive,
  options: ImportOptions,
  store: ConfigResourceStore,
  catalogue: ResourceCatalogue,
): Promise<Matcher> {
  if (options.strategy === 'create') {
    if (options.targetAgentId !== undefined)
      throw invalid('targetAgentId is used by the merge and upgrade strategies only.', { path: 'targetAgentId' });
    return async () => undefined;
  }
  if (options.strategy === 'merge') {
    const agent = options.targetAgentId === undefined ? undefined : await targetAgent(store, options.targetAgentId);
    return async (node) => {
      if (node.kind === 'agent' && agent) return agent;
      const byOrigin = await store.findByOrigin(node.kind, node.originId);
      if (byOrigin) return { id: byOrigin.id, currentVersion: byOrigin.currentVersion };
      return liveResource(store, node.kind, node.originId);
    };
  }
  const agent =
    options.targetAgentId !== undefined
      ? await targetAgent(store, options.targetAgentId)
      : await agentByName(store, archive.agent.name);
  const slots = await structureOf(store, agent, catalogue);
  return async (node) => {
    const id = slots.get(node.slot);
    return id === undefined ? undefined : liveResource(store, node.kind, id);
  };
}

async function agentByName(store: ConfigResourceStore, name: string): Promise<ExistingResource> {
  if (name.trim() === '') {
    throw invalid(
      'The agent in the ZIP has no name, so the agent to upgrade cannot be found by name; give targetAgentId.',
      { path: 'targetAgentId' },
    );
  }
  const found = (await store.listDescriptors('agent', { filter: name, index: 0, limit: 10_000 })).filter(
    (d) => d.name === name,
  );
  if (found.length === 0)
    throw notFound(`No agent named '${name}' to upgrade; give targetAgentId, or import with strategy=create.`);
  if (found.length > 1)
    throw conflict(`${found.length} agents are named '${name}'; give targetAgentId to say which one to upgrade.`);
  return { id: found[0]!.id, currentVersion: found[0]!.currentVersion };
}

/** Slot -> resource id of the target agent's current version, walked the way the archive is. */
async function structureOf(
  store: ConfigResourceStore,
  agent: ExistingResource,
  catalogue: ResourceCatalogue,
): Promise<Map<string, string>> {
  const slots = new Map<string, string>();
  const walk = async (kind: string, id: string, version: number, slot: string, depth: number): Promise<void> => {
    slots.set(slot, id);
    const json = depth < 4 ? await store.read(kind, id, version) : undefined;
    if (json === undefined) return;
    const ordinals = new Map<string, number>();
    for (const reference of referenceSlots(catalogue.named(kind), JSON.parse(json))) {
      const parsed = parseReference(reference.uri);
      const childKind = parsed && kindOfUriType(parsed.type)?.name;
      if (!parsed || !childKind) continue;
      const ordinal = ordinals.get(childKind) ?? 0;
      ordinals.set(childKind, ordinal + 1);
      const child = childSlot(slot, childKind, ordinal);
      if (!slots.has(child)) await walk(childKind, parsed.id, parsed.version, child, depth + 1);
    }
  };
  await walk('agent', agent.id, agent.currentVersion, 'agent', 0);
  return slots;
}
