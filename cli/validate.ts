import { readFileSync } from 'node:fs';
import { kindNamed } from '../src/resources/kinds.ts';
import { compileBodyValidator, describeSchemaError } from '../src/resources/validation.ts';
import { isAgentOwned, referencesIn } from './archive.ts';
import { FolderError, type FolderProblem, type FolderResource } from './folder.ts';

/**
 * Offline checks of a folder: every configuration against its kind's JSON Schema as the server publishes it (the
 * copy bundled in `schemas.json`, validated the way the server validates bodies), every reference naming a file of
 * the folder, and every file used by the agent. Problems carry the file and line.
 */

export const BUNDLED_SCHEMAS_URL = new URL('./schemas.json', import.meta.url);

let validators: Map<string, ReturnType<typeof compileBodyValidator>> | undefined;
function validatorOf(kind: string) {
  validators ??= new Map(
    Object.entries(JSON.parse(readFileSync(BUNDLED_SCHEMAS_URL, 'utf8')) as Record<string, object>).map(
      ([name, schema]) => [name, compileBodyValidator(schema)],
    ),
  );
  return validators.get(kind)!;
}

const pathOf = (instancePath: string) =>
  instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));

export function folderProblems(resources: readonly FolderResource[]): FolderProblem[] {
  const problems: FolderProblem[] = [];
  const byId = new Map(resources.map((r) => [r.id, r]));
  for (const resource of resources) {
    const validate = validatorOf(resource.kind);
    if (!validate(resource.config)) {
      const error = validate.errors![0]!;
      const field = (error.params as { additionalProperty?: string }).additionalProperty;
      problems.push({
        file: resource.file,
        line: resource.lineOf(['config', ...pathOf(error.instancePath), ...(field === undefined ? [] : [field])]),
        message: describeSchemaError(error, kindNamed(resource.kind).title).message,
      });
    }
    for (const reference of referencesIn(resource.config)) {
      const target = byId.get(reference.id);
      if (target?.kind === reference.kind) continue;
      problems.push({
        file: resource.file,
        line: resource.lineOf(['config', ...reference.path]),
        message: `the reference names ${kindNamed(reference.kind).title} ${reference.id}, which is not in the folder.`,
      });
    }
  }
  const used = new Set<string>();
  const visit = (resource: FolderResource) => {
    if (used.has(resource.id)) return;
    used.add(resource.id);
    for (const reference of referencesIn(resource.config)) {
      const target = byId.get(reference.id);
      if (target) visit(target);
    }
  };
  for (const resource of resources) if (resource.kind === 'agent' || isAgentOwned(resource.kind)) visit(resource);
  for (const resource of resources)
    if (!used.has(resource.id))
      problems.push({
        file: resource.file,
        line: 1,
        message: `the agent does not use this ${kindNamed(resource.kind).title} (no workflow references it); reference it or remove the file.`,
      });
  return problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/** Throws a FolderError listing every problem. */
export function checkFolder(resources: readonly FolderResource[]): void {
  const problems = folderProblems(resources);
  if (problems.length > 0) throw new FolderError(problems);
}
