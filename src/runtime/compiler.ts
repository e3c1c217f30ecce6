import { kindOfUriType, type KindName } from '../resources/kinds.ts';
import { parseExtensionType, parseReference } from '../resources/uri.ts';
import { DeploymentError, type CompiledTask, type TaskRegistry } from './tasks.ts';
import { agentMemoryOptions, type UserMemoryConfig } from '../user-memory/config.ts';

/** One step of a workflow's `packageExtensions`, as stored. */
interface WorkflowStep {
  readonly type: string;
  readonly config?: unknown;
  readonly extensions?: unknown;
}

/** An agent version compiled for execution: its workflows in order, each an ordered list of compiled tasks. */
export interface CompiledWorkflow {
  readonly id: string;
  readonly version: number;
  readonly tasks: readonly CompiledTask[];
}

export interface CompiledAgent {
  readonly agentId: string;
  readonly version: number;
  readonly workflows: readonly CompiledWorkflow[];
}

/** Reads stored configuration: the JSON text of one version, or undefined when it does not exist. */
export type ConfigurationSource = (kindName: string, id: string, version: number) => Promise<string | undefined>;

/**
 * Compiles agent -> workflows -> extensions, all by versioned reference. Every problem an author can fix (a
 * missing resource, a reference of the wrong kind, an unknown extension type, an invalid task configuration)
 * is a `DeploymentError` whose message says where it is.
 */
export async function compileAgent(
  agentId: string,
  version: number,
  read: ConfigurationSource,
  registry: TaskRegistry,
): Promise<CompiledAgent> {
  const loaded = new Map<string, unknown>();
  const load = async (kindName: string, id: string, resourceVersion: number, shownAs: string) => {
    const key = `${kindName}/${id}/${resourceVersion}`;
    if (!loaded.has(key)) {
      const json = await read(kindName, id, resourceVersion);
      if (json === undefined) throw new DeploymentError(`${shownAs} does not exist.`);
      loaded.set(key, JSON.parse(json));
    }
    return loaded.get(key);
  };
  const resolve = async (reference: string, expectedKind: KindName) => {
    const parsed = parseReference(reference);
    const kind = parsed && kindOfUriType(parsed.type);
    if (!parsed || !kind) throw new DeploymentError(`'${reference}' is not a resource reference.`);
    if (kind.name !== expectedKind)
      throw new DeploymentError(`'${reference}' names a ${kind.title}, not a ${expectedKind}.`);
    return load(kind.name, parsed.id, parsed.version, `The ${kind.title} ${reference}`);
  };

  const agent = (await load('agent', agentId, version, `Agent ${agentId} version ${version}`)) as {
    packages?: string[];
    enableMemoryTools?: boolean;
    userMemoryConfig?: UserMemoryConfig;
  };
  const agentMemory = agentMemoryOptions(agent);
  const workflows: CompiledWorkflow[] = [];
  for (const [index, reference] of (agent.packages ?? []).entries()) {
    const parsed = parseReference(reference);
    if (!parsed) throw new DeploymentError(`packages[${index}] '${reference}' is not a resource reference.`);
    const workflow = (await resolve(reference, 'workflow')) as { packageExtensions?: WorkflowStep[] };
    const tasks: CompiledTask[] = [];
    const workflowSteps = (workflow.packageExtensions ?? []).map((step) => ({
      type: parseExtensionType(step.type),
      config: step.config ?? {},
      extensions: step.extensions ?? {},
    }));
    for (const [position, extension] of (workflow.packageExtensions ?? []).entries()) {
      const where = `workflow ${parsed.id} version ${parsed.version}, packageExtensions[${position}]`;
      const type = parseExtensionType(extension.type);
      if (type === undefined || !registry.get(type))
        throw new DeploymentError(`Unknown extension type '${extension.type}' in ${where}.`);
      try {
        tasks.push(
          await registry.compile(type, extension.config ?? {}, extension.extensions ?? {}, {
            workflowId: parsed.id,
            workflowSteps,
            agentMemory,
            resolve,
          }),
        );
      } catch (error) {
        if (error instanceof DeploymentError) throw new DeploymentError(`${error.message} (${where})`);
        throw error;
      }
    }
    workflows.push({ id: parsed.id, version: parsed.version, tasks });
  }
  return { agentId, version, workflows };
}
