import { readFileSync } from 'node:fs';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { conflict, notFound } from '../errors.ts';
import type { ResourceCatalogue } from '../resources/catalogue.ts';
import { kindNamed, kindOfUriType, type ResourceKindDefinition } from '../resources/kinds.ts';
import { formatReference, parseReference } from '../resources/uri.ts';
import type { ConfigResourceStore, DescriptorRecord } from '../storage/ports.ts';
import {
  agentFileName,
  descriptorFileName,
  EXPORT_FORMAT_VERSION,
  exportFileName,
  METADATA_FILE,
  resourceFileName,
  workflowFileName,
  workflowFolder,
} from './layout.ts';
import { referenceSlots } from './references.ts';
import { scrubSecretFields } from '../security/secret-scrubbing.ts';

/**
 * Builds the export ZIP of one agent version in memory (reference §12.3): the agent, each workflow in its
 * `<id>/<version>/` folder with the resources it references, the resources that belong to the agent (transcripts)
 * each in its own `<id>/<version>/` folder, a descriptor beside every file, and `metadata.json`.
 * Bodies are the stored configuration (spec names) with secret values scrubbed; conversations are not exported.
 */

/** Agent-owned resources of one kind looked at per export, at most. */
const MAX_OWNED = 10_000;

export const SERVICE_VERSION: string = (() => {
  try {
    return String(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
  } catch {
    return 'unknown';
  }
})();

export interface ExportedFileInfo {
  readonly kind: string;
  readonly originId: string;
  readonly version: number;
}

export interface ExportMetadata {
  readonly formatVersion: number;
  readonly exportedAt: string;
  readonly serviceVersion: string;
  readonly agent: { readonly id: string; readonly version: number; readonly name: string };
  /** Every configuration file of the archive: its kind, the id it had here (its origin id on import) and version. */
  readonly files: Record<string, ExportedFileInfo>;
  /** Secret values replaced by an empty string (vault references are kept). */
  readonly scrubbedSecrets: readonly { readonly file: string; readonly path: string }[];
}

export class AgentExporter {
  readonly #store: ConfigResourceStore;
  readonly #catalogue: ResourceCatalogue;
  readonly #clock: () => number;

  constructor(store: ConfigResourceStore, catalogue: ResourceCatalogue, clock: () => number = Date.now) {
    this.#store = store;
    this.#catalogue = catalogue;
    this.#clock = clock;
  }

  /** The version to export (the current one when none is given); 404 when the agent or the version is unknown. */
  async resolveVersion(agentId: string, version: number | undefined): Promise<number> {
    const record = await this.#store.descriptor('agent', agentId);
    if (!record || record.deleted) throw notFound(`No agent with id ${agentId}.`);
    const chosen = version ?? record.currentVersion;
    if ((await this.#store.read('agent', agentId, chosen)) === undefined)
      throw notFound(`No agent with id ${agentId} and version ${chosen}.`);
    return chosen;
  }

  /** Checks that the agent version can be exported and returns the download name. */
  async prepare(agentId: string, version: number | undefined): Promise<string> {
    const chosen = await this.resolveVersion(agentId, version);
    await this.build(agentId, chosen);
    return exportFileName(agentId, chosen);
  }

  async build(agentId: string, version: number): Promise<{ zip: Uint8Array; metadata: ExportMetadata }> {
    const exportedAt = this.#clock();
    const files: Zippable = {};
    const infos: Record<string, ExportedFileInfo> = {};
    const scrubbedSecrets: { file: string; path: string }[] = [];
    const addJson = (name: string, value: unknown) => {
      files[name] = strToU8(JSON.stringify(value));
    };
    const addResource = async (
      kind: string,
      id: string,
      resourceVersion: number,
      file: string,
      descriptorFile: string,
      referencedBy: string,
    ) => {
      const json = await this.#store.read(kind, id, resourceVersion);
      if (json === undefined) {
        throw conflict(
          `${referencedBy} references ${kindNamed(kind).title} ${id} version ${resourceVersion}, which does not exist; the agent cannot be exported.`,
        );
      }
      const { body, scrubbed } = scrubSecretFields(kind, JSON.parse(json));
      scrubbedSecrets.push(...scrubbed.map((s) => ({ file, path: s.path })));
      addJson(file, body);
      addJson(descriptorFile, descriptorDocument(kind, id, resourceVersion, await this.#store.descriptor(kind, id)));
      infos[file] = { kind, originId: id, version: resourceVersion };
      return body;
    };

    const agentDescriptor = await this.#store.descriptor('agent', agentId);
    const agent = await addResource(
      'agent',
      agentId,
      version,
      agentFileName(agentId),
      descriptorFileName('', agentId),
      `Agent ${agentId}`,
    );
    const slotsOf = (kind: string, body: unknown) => referenceSlots(this.#catalogue.named(kind), body);
    for (const slot of slotsOf('agent', agent)) {
      const workflow = parseReference(slot.uri);
      if (!workflow)
        throw conflict(
          `Agent ${agentId} holds '${slot.uri}', which is not a workflow reference; the agent cannot be exported.`,
        );
      const folder = workflowFolder(workflow.id, workflow.version);
      const workflowFile = workflowFileName(workflow.id, workflow.version);
      if (files[workflowFile] !== undefined) continue;
      const workflowBody = await addResource(
        'workflow',
        workflow.id,
        workflow.version,
        workflowFile,
        descriptorFileName(folder, workflow.id),
        `Agent ${agentId}`,
      );
      const pending = slotsOf('workflow', workflowBody).map((s) => ({ uri: s.uri, from: `Workflow ${workflow.id}` }));
      while (pending.length > 0) {
        const { uri, from } = pending.shift()!;
        const reference = parseReference(uri);
        const kind = reference && kindOfUriType(reference.type);
        if (!reference || !kind)
          throw conflict(`${from} holds '${uri}', which is not a resource reference; the agent cannot be exported.`);
        const file = resourceFileName(folder, kind.name, reference.id);
        if (files[file] !== undefined) continue;
        const body = await addResource(
          kind.name,
          reference.id,
          reference.version,
          file,
          descriptorFileName(folder, reference.id),
          from,
        );
        for (const nested of slotsOf(kind.name, body))
          pending.push({ uri: nested.uri, from: `${kind.title} ${reference.id}` });
      }
    }

    for (const kind of this.#catalogue.all) {
      if (!kind.agentOwned) continue;
      for (const owned of await ownedBy(this.#store, kind, agentId)) {
        const folder = workflowFolder(owned.id, owned.currentVersion);
        await addResource(
          kind.name,
          owned.id,
          owned.currentVersion,
          resourceFileName(folder, kind.name, owned.id),
          descriptorFileName(folder, owned.id),
          `Agent ${agentId}`,
        );
      }
    }

    const metadata: ExportMetadata = {
      formatVersion: EXPORT_FORMAT_VERSION,
      exportedAt: new Date(exportedAt).toISOString(),
      serviceVersion: SERVICE_VERSION,
      agent: { id: agentId, version, name: agentDescriptor?.name ?? '' },
      files: infos,
      scrubbedSecrets,
    };
    addJson(METADATA_FILE, metadata);
    return { zip: zipSync(files, { level: 6, mtime: exportedAt }), metadata };
  }
}

/** The live resources of an agent-owned kind (transcripts) that belong to the agent, at their current versions. */
async function ownedBy(
  store: ConfigResourceStore,
  kind: ResourceKindDefinition,
  agentId: string,
): Promise<DescriptorRecord[]> {
  const owned: DescriptorRecord[] = [];
  for (const record of await store.listDescriptors(kind.name, { filter: '', index: 0, limit: MAX_OWNED })) {
    const json = await store.read(kind.name, record.id, record.currentVersion);
    if (json !== undefined && kind.agentOwned?.ownerOf(JSON.parse(json)) === agentId) owned.push(record);
  }
  return owned;
}

/** The descriptor as exported: no owner, workspace or grants (they belong to the exporting installation). */
function descriptorDocument(kind: string, id: string, version: number, record: DescriptorRecord | undefined) {
  const definition = kindNamed(kind);
  return {
    resource: formatReference(definition.uriType, definition.storePath, id, version),
    name: record?.name ?? '',
    description: record?.description ?? '',
    createdOn: record?.createdOn ?? 0,
    lastModifiedOn: record?.lastModifiedOn ?? 0,
    deleted: false,
    ...(record?.originId !== undefined ? { originId: record.originId } : {}),
  };
}
