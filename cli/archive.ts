import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { parseLooseReference } from '../src/backup/references.ts';
import {
  agentFileName,
  descriptorFileName,
  METADATA_FILE,
  resourceFileName,
  workflowFolder,
} from '../src/backup/layout.ts';
import { kindNamed } from '../src/resources/kinds.ts';
import { ResourceCatalogue } from '../src/resources/catalogue.ts';
import { formatReference } from '../src/resources/uri.ts';
import { isRecord } from '../src/shared/json.ts';
import type { FolderResource, ResourceToWrite } from './folder.ts';

/**
 * The bridge between a folder and the service's export/import archives: the service's own import (one storage
 * transaction: all or nothing) applies a folder, and its export is what `pull` writes out.
 */

export type JsonPath = readonly (string | number)[];

export interface FoundReference {
  readonly path: JsonPath;
  readonly kind: string;
  readonly id: string;
}

/** Every string of a configuration body that is a resource reference, with its path. */
export function referencesIn(value: unknown, path: JsonPath = []): FoundReference[] {
  if (typeof value === 'string') {
    const reference = parseLooseReference(value);
    return reference ? [{ path, kind: reference.kind, id: reference.id }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => referencesIn(item, [...path, i]));
  if (isRecord(value)) return Object.entries(value).flatMap(([key, item]) => referencesIn(item, [...path, key]));
  return [];
}

/** A deep copy of `value` with each reference replaced by what `replace` answers for it (unchanged: undefined). */
export function rewriteReferences(value: unknown, replace: (kind: string, id: string) => string | undefined): unknown {
  if (typeof value === 'string') {
    const reference = parseLooseReference(value);
    return (reference && replace(reference.kind, reference.id)) ?? value;
  }
  if (Array.isArray(value)) return value.map((item) => rewriteReferences(item, replace));
  if (isRecord(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rewriteReferences(item, replace)]));
  return value;
}

const catalogue = new ResourceCatalogue([]);

/**
 * The fields an import sets on a resource the agent owns (a transcript's `agentId` and `agentVersion`): the kind's
 * own `bind` says which. A folder leaves them out; the import binds them to the agent it writes.
 */
export function withoutOwnerFields(kind: string, config: unknown): unknown {
  const owned = catalogue.named(kind).agentOwned;
  if (!owned || !isRecord(config)) return config;
  const bound = owned.bind({}, '', 1);
  return Object.fromEntries(Object.entries(config).filter(([key]) => !(isRecord(bound) && key in bound)));
}

export const isAgentOwned = (kind: string): boolean => catalogue.named(kind).agentOwned !== undefined;

/** `svc://ai.svc.<type>/<store>/<id>?version=n` of a kind. */
export const referenceTo = (kind: string, id: string, version: number): string =>
  formatReference(kindNamed(kind).uriType, kindNamed(kind).storePath, id, version);

/**
 * The folder as an import archive: the agent at the top, every other resource in its own `<id>/1/` folder with a
 * descriptor carrying its name, and every reference to a file of the folder written as version 1 of it (the folder
 * holds one version of each resource; the import rewrites references to the versions it writes).
 */
export function folderArchive(resources: readonly FolderResource[]): Uint8Array {
  const kindOf = new Map(resources.map((r) => [r.id, r.kind]));
  const files: Zippable = {};
  const json = (value: unknown) => strToU8(JSON.stringify(value));
  for (const resource of resources) {
    const body = rewriteReferences(resource.config, (kind, id) =>
      kindOf.get(id) === kind ? referenceTo(kind, id, 1) : undefined,
    );
    const folder = resource.kind === 'agent' ? '' : workflowFolder(resource.id, 1);
    const file =
      resource.kind === 'agent' ? agentFileName(resource.id) : resourceFileName(folder, resource.kind, resource.id);
    files[file] = json(body);
    files[descriptorFileName(folder, resource.id)] = json({
      resource: referenceTo(resource.kind, resource.id, 1),
      name: resource.name,
      description: resource.description,
    });
  }
  return zipSync(files, { level: 1 });
}

interface ExportMetadata {
  readonly files: Record<string, { kind: string; originId: string; version: number }>;
  readonly scrubbedSecrets: readonly { file: string; path: string }[];
}

export interface PulledAgent {
  readonly resources: ResourceToWrite[];
  /** `<file> <JSON path>` of each secret value the export blanked (vault references are kept). */
  readonly scrubbedSecrets: string[];
}

/** The resources of an export archive, one per resource (a resource exported at two versions is refused). */
export function readExport(zip: Uint8Array): PulledAgent {
  const entries = unzipSync(zip);
  const text = (name: string) => new TextDecoder().decode(entries[name]);
  const metadata = JSON.parse(text(METADATA_FILE)) as ExportMetadata;
  const byId = new Map<string, ResourceToWrite & { version: number }>();
  for (const [file, info] of Object.entries(metadata.files)) {
    const descriptorFile = file.replace(/[^/]+$/, `${info.originId}.descriptor.json`);
    const descriptor = entries[descriptorFile] ? (JSON.parse(text(descriptorFile)) as Record<string, unknown>) : {};
    const earlier = byId.get(info.originId);
    if (earlier && earlier.version !== info.version)
      throw new Error(
        `The agent references ${kindNamed(info.kind).title} ${info.originId} at versions ${earlier.version} and ${info.version}; a folder holds one version of each resource. Make its workflows reference one version, then pull again.`,
      );
    byId.set(info.originId, {
      kind: info.kind,
      id: info.originId,
      version: info.version,
      name: typeof descriptor.name === 'string' ? descriptor.name : '',
      description: typeof descriptor.description === 'string' ? descriptor.description : '',
      config: withoutOwnerFields(info.kind, JSON.parse(text(file))),
    });
  }
  return {
    resources: [...byId.values()].map(({ version: _version, ...resource }) => resource),
    scrubbedSecrets: metadata.scrubbedSecrets.map((s) => `${s.file} ${s.path}`),
  };
}
