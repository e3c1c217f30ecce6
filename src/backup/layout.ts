import { kindNamed, kindOfExportName } from '../resources/kinds.ts';

/**
 * The export ZIP layout (reference §12.3), shared by export and import:
 *
 * ```
 * <agentId>.agent.json                                   the agent configuration
 * <agentId>.descriptor.json                              its descriptor
 * <workflowId>/<workflowVersion>/<workflowId>.workflow.json  (+ <workflowId>.descriptor.json)
 * <workflowId>/<workflowVersion>/<resourceId>.<ext>.json     (+ <resourceId>.descriptor.json)
 * <transcriptId>/<version>/<transcriptId>.transcript.json     resources the agent owns (+ descriptor)
 * metadata.json                                          format version, origin ids and versions, scrubbed secrets
 * ```
 */

export const METADATA_FILE = 'metadata.json';
export const EXPORT_FORMAT_VERSION = 1;

const agentKind = kindNamed('agent');
/** `agent|bot`: the agent file's export name and the older ones. */
const AGENT_NAMES = [agentKind.exportName, ...agentKind.importNames].join('|');

export const agentFileName = (agentId: string) => `${agentId}.${agentKind.exportName}.json`;
export const descriptorFileName = (folder: string, id: string) => `${folder}${id}.descriptor.json`;
export const workflowFolder = (workflowId: string, version: number) => `${workflowId}/${version}/`;
export const workflowFileName = (workflowId: string, version: number) =>
  resourceFileName(workflowFolder(workflowId, version), 'workflow', workflowId);
export const resourceFileName = (folder: string, kind: string, id: string) =>
  `${folder}${id}.${kindNamed(kind).exportName}.json`;

/** The download name of an export, and its pattern (nothing else is ever served). */
export const exportFileName = (agentId: string, version: number) => `${agentId}-${version}.zip`;
export const EXPORT_FILE_PATTERN = /^([0-9a-f]{24})-([1-9]\d{0,8})\.zip$/;

/** The agent file of an archive: `<id>.agent.json` (or the older `<id>.bot.json`), possibly below a folder. */
export const AGENT_FILE_PATTERN = new RegExp(`^((?:[^/]+/)*)([^/]+)\\.(?:${AGENT_NAMES})\\.json$`);
const TOP_AGENT_FILE = new RegExp(`^([^/]+)\\.(?:${AGENT_NAMES})\\.json$`);

export type ArchiveEntry =
  | { readonly role: 'agent'; readonly id: string }
  | { readonly role: 'descriptor'; readonly folder: string; readonly id: string }
  | { readonly role: 'resource'; readonly folder: string; readonly id: string; readonly kind: string }
  | { readonly role: 'metadata' }
  | { readonly role: 'other' };

/** What an entry (path relative to the agent file's folder) holds. */
export function classifyEntry(path: string): ArchiveEntry {
  if (path === METADATA_FILE) return { role: 'metadata' };
  const agent = TOP_AGENT_FILE.exec(path);
  if (agent) return { role: 'agent', id: agent[1]! };
  const descriptor = /^((?:[^/]+\/[^/]+\/)?)([^/]+)\.descriptor\.json$/.exec(path);
  if (descriptor) return { role: 'descriptor', folder: descriptor[1]!, id: descriptor[2]! };
  const resource = /^([^/]+\/[^/]+\/)([^/]+)\.([a-z]+)\.json$/.exec(path);
  const kind = resource ? kindOfExportName(resource[3]!) : undefined;
  if (resource && kind && kind !== agentKind.name)
    return { role: 'resource', folder: resource[1]!, id: resource[2]!, kind };
  return { role: 'other' };
}
