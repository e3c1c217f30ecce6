import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import { Document, isMap, isScalar, isSeq, LineCounter, parseDocument, stringify } from 'yaml';
import { kindNamed, resourceKinds } from '../src/resources/kinds.ts';
import { isRecord } from '../src/shared/json.ts';

/**
 * An agent kept as a folder: `agent.yaml` and one file per resource in a folder per kind (`workflows/`,
 * `behaviorsets/`, `dictionaries/`, ...), named after the resource's name. A file is
 *
 * ```yaml
 * kind: behavior
 * id: 6650f1c2a9e4b7d3c1e0a2b4     # the resource's id where it came from: its origin id once applied elsewhere
 * name: Greeting rules
 * description: ''
 * config: { ... }                  # the configuration body, references as svc:// URIs naming other files' ids
 * ```
 *
 * Keys are written sorted at every level and YAML is never folded, so the same configuration always gives the same
 * text and a diff shows only real changes.
 */

export type FileFormat = 'yaml' | 'json';

export interface FolderResource {
  readonly kind: string;
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly config: unknown;
  /** The file, relative to the folder. */
  readonly file: string;
  /** The 1-based line of a JSON path (`['config', 'packages', 0]`) in the file, or of its closest parent. */
  lineOf(path: readonly (string | number)[]): number;
}

export interface FolderProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export class FolderError extends Error {
  readonly problems: readonly FolderProblem[];
  constructor(problems: readonly FolderProblem[]) {
    super(problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join('\n'));
    this.problems = problems;
  }
}

export const AGENT_FILE = 'agent';
const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const KIND_FOLDERS = new Map<string, string>(
  resourceKinds.filter((k) => k.name !== 'agent').map((k) => [k.slug, k.name]),
);

/** The folder a kind's files go in (its manager slug: `workflows`, `behaviorsets`, ...). */
export const folderOfKind = (kind: string): string => kindNamed(kind).slug;

/** Every resource file of the folder: `agent.*` and the files of the kind folders. */
async function resourceFiles(folder: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    if (entry.isFile() && EXTENSIONS.has(extname(entry.name)) && entry.name.startsWith(`${AGENT_FILE}.`))
      files.push(entry.name);
    if (!entry.isDirectory() || !KIND_FOLDERS.has(entry.name)) continue;
    for (const inner of await readdir(join(folder, entry.name), { withFileTypes: true }))
      if (inner.isFile() && EXTENSIONS.has(extname(inner.name))) files.push(`${entry.name}/${inner.name}`);
  }
  return files.sort();
}

/** Reads every resource file; a file that is not a resource file (bad YAML, missing fields) is a problem. */
export async function readFolder(folder: string): Promise<FolderResource[]> {
  const problems: FolderProblem[] = [];
  const resources: FolderResource[] = [];
  for (const file of await resourceFiles(folder)) {
    const text = await readFile(join(folder, file), 'utf8');
    const lineCounter = new LineCounter();
    const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
    const lineAt = (offset: number | undefined) => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
    if (document.errors.length > 0) {
      for (const error of document.errors)
        problems.push({ file, line: lineAt(error.pos[0]), message: error.message.split('\n')[0]! });
      continue;
    }
    const value: unknown = document.toJS({ maxAliasCount: 100 });
    /** The line of a path's key (or list item), else of its closest parent's. */
    const lineOf = (path: readonly (string | number)[]): number => {
      for (let length = path.length; length > 0; length--) {
        const parent = length === 1 ? document.contents : document.getIn(path.slice(0, length - 1), true);
        const last = path[length - 1];
        const node = isMap(parent)
          ? parent.items.find((pair) => isScalar(pair.key) && String(pair.key.value) === String(last))?.key
          : isSeq(parent)
            ? parent.items[Number(last)]
            : undefined;
        const range = (node as { range?: [number, number, number] } | undefined)?.range;
        if (range) return lineAt(range[0]);
      }
      return 1;
    };
    const fileProblem = (message: string, path: (string | number)[] = []) =>
      problems.push({ file, line: lineOf(path), message });
    if (!isRecord(value)) {
      fileProblem('the file must hold a mapping with kind, id, name, description and config.');
      continue;
    }
    const expectedKind = file.includes('/') ? KIND_FOLDERS.get(file.split('/')[0]!) : 'agent';
    for (const key of Object.keys(value))
      if (!['kind', 'id', 'name', 'description', 'config'].includes(key))
        fileProblem(`unknown field '${key}' (a file holds kind, id, name, description and config).`, [key]);
    if (value.kind !== expectedKind)
      fileProblem(`kind must be '${expectedKind}' for a file in this place, not '${String(value.kind)}'.`, ['kind']);
    if (typeof value.id !== 'string' || !/^[0-9A-Fa-f-]{18,}$/.test(value.id))
      fileProblem('id must be the resource id (24 hex characters, or the id it had where it came from).', ['id']);
    for (const text of ['name', 'description'] as const)
      if (value[text] !== undefined && typeof value[text] !== 'string') fileProblem(`${text} must be text.`, [text]);
    if (value.config === undefined) fileProblem('config is missing.');
    resources.push({
      kind: String(value.kind),
      id: String(value.id),
      name: typeof value.name === 'string' ? value.name : '',
      description: typeof value.description === 'string' ? value.description : '',
      config: value.config,
      file,
      lineOf,
    });
  }
  const seen = new Map<string, string>();
  for (const resource of resources) {
    const earlier = seen.get(resource.id);
    if (earlier)
      problems.push({
        file: resource.file,
        line: resource.lineOf(['id']),
        message: `id ${resource.id} is also in ${earlier}.`,
      });
    seen.set(resource.id, resource.file);
  }
  const agents = resources.filter((r) => r.kind === 'agent');
  if (agents.length !== 1 && problems.length === 0)
    problems.push({
      file: relative(process.cwd(), folder) || '.',
      line: 1,
      message: `the folder must hold exactly one agent file (${AGENT_FILE}.yaml); it holds ${agents.length}.`,
    });
  if (problems.length > 0) throw new FolderError(problems);
  return resources;
}

export interface ResourceToWrite {
  readonly kind: string;
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly config: unknown;
}

/** `Greeting rules` -> `greeting-rules`; a name without letters or digits gives the id. */
function fileStem(name: string, id: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);
  return slug === '' ? id : slug;
}

export function formatFile(resource: ResourceToWrite, format: FileFormat): string {
  const { kind, id, name, description, config } = resource;
  const document = { kind, id, name, description, config: sortedKeys(config) };
  if (format === 'json') return `${JSON.stringify(document, null, 2)}\n`;
  return stringify(new Document(document), { lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false });
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys(value[key])]),
  );
}

/**
 * Writes the resources (one file each, named after the resource's name; names that collide get the id as suffix)
 * and removes the resource files of the folder that are no longer written. Answers the written files.
 */
export async function writeFolder(
  folder: string,
  resources: readonly ResourceToWrite[],
  format: FileFormat,
): Promise<string[]> {
  const extension = format === 'json' ? '.json' : '.yaml';
  const stems = new Map<string, number>();
  const stemOf = (r: ResourceToWrite) => `${r.kind}/${fileStem(r.name, r.id)}`;
  for (const resource of resources) stems.set(stemOf(resource), (stems.get(stemOf(resource)) ?? 0) + 1);
  const written: string[] = [];
  for (const resource of resources) {
    const stem = fileStem(resource.name, resource.id);
    const unique = stems.get(stemOf(resource)) === 1 || stem === resource.id ? stem : `${stem}-${resource.id}`;
    const file =
      resource.kind === 'agent' ? `${AGENT_FILE}${extension}` : `${folderOfKind(resource.kind)}/${unique}${extension}`;
    await mkdir(join(folder, file, '..'), { recursive: true });
    await writeFile(join(folder, file), formatFile(resource, format));
    written.push(file);
  }
  for (const file of await resourceFiles(folder)) if (!written.includes(file)) await rm(join(folder, file));
  return written.sort();
}
