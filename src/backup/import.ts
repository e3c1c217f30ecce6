import { conflict } from '../errors.ts';
import { kindNamed } from '../resources/kinds.ts';
import type { DescriptorOrigin, Storage } from '../storage/ports.ts';
import type { ImportAction, ImportPlan, PlannedResource } from './import-plan.ts';

export interface ImportedResourceView {
  readonly originId: string;
  readonly kind: string;
  readonly name: string;
  readonly action: ImportAction;
  readonly targetId?: string;
  readonly targetVersion?: number;
  /** The import sets the name and description of the matched resource to the archive's. */
  readonly renamed?: true;
}

/**
 * Writes a validated import plan in one storage transaction, so it lands whole or not at all and no reader sees a
 * part of it: every CREATE first, then every UPDATE (children before parents, the agent last), then the names and
 * descriptions of matched resources. An UPDATE finds its resource moved on since the plan was made: 409, nothing
 * imported.
 */
export async function applyImportPlan(
  plan: ImportPlan,
  storage: Pick<Storage, 'transaction'>,
  now: number,
  owner: Omit<DescriptorOrigin, 'originId'> = {},
): Promise<void> {
  await storage.transaction(async ({ resources: store }) => {
    for (const resource of plan.resources) {
      if (resource.action !== 'CREATE') continue;
      const { node } = resource;
      await store.create({
        kind: node.kind,
        id: resource.targetId,
        bodyJson: resource.bodyJson,
        now,
        name: node.name,
        description: node.description,
        origin: { ...owner, originId: node.originId },
      });
    }
    for (const resource of plan.resources) {
      if (resource.action !== 'UPDATE') continue;
      const outcome = await store.update(
        resource.node.kind,
        resource.targetId,
        resource.targetVersion - 1,
        resource.bodyJson,
        now,
      );
      if (outcome.status !== 'updated') {
        throw conflict(
          `The ${kindNamed(resource.node.kind).title} ${resource.targetId} changed while the import ran (it is no longer at version ${resource.targetVersion - 1}); nothing was imported, try again.`,
        );
      }
    }
    for (const { node, targetId, rename } of plan.resources)
      if (rename) await store.editDescriptor(node.kind, targetId, rename, now);
  });
}

/** One resource of a plan as the API shows it; `withNewIds` is false for a preview (new ids are made at import). */
export function resourceView(resource: PlannedResource, withNewIds: boolean): ImportedResourceView {
  const { node, action } = resource;
  const view = {
    originId: node.originId,
    kind: node.kind,
    name: node.name,
    action,
    ...(resource.rename ? { renamed: true as const } : {}),
  };
  if (action === 'CREATE' && !withNewIds) return view;
  return { ...view, targetId: resource.targetId, targetVersion: resource.targetVersion };
}
