import { conflict } from '../errors.ts';
import { kindNamed } from '../resources/kinds.ts';
import type { ConfigResourceStore, DescriptorOrigin } from '../storage/ports.ts';
import type { ImportAction, ImportPlan, PlannedResource } from './import-plan.ts';

/**
 * Writes a validated import plan, all or nothing: every CREATE first, then every UPDATE (children before parents,
 * the agent last). When a write fails, the resources created so far are purged and every update already made
 * is undone by a further version holding the previous content; then the failure is reported.
 */

export interface ImportedResourceView {
  readonly originId: string;
  readonly kind: string;
  readonly name: string;
  readonly action: ImportAction;
  readonly targetId?: string;
  readonly targetVersion?: number;
}

export async function applyImportPlan(plan: ImportPlan, store: ConfigResourceStore, now: number, owner: Omit<DescriptorOrigin, 'originId'> = {}): Promise<void> {
  const created: PlannedResource[] = [];
  const updated: PlannedResource[] = [];
  try {
    for (const resource of plan.resources) {
      if (resource.action !== 'CREATE') continue;
      const { node } = resource;
      await store.create({
        kind: node.kind, id: resource.targetId, bodyJson: resource.bodyJson, now,
        name: node.name, description: node.description, origin: { ...owner, originId: node.originId },
      });
      created.push(resource);
    }
    for (const resource of plan.resources) {
      if (resource.action !== 'UPDATE') continue;
      const outcome = await store.update(resource.node.kind, resource.targetId, resource.targetVersion - 1, resource.bodyJson, now);
      if (outcome.status !== 'updated') {
        throw conflict(
          `The ${kindNamed(resource.node.kind).title} ${resource.targetId} changed while the import ran (it is no longer at version ${resource.targetVersion - 1}); nothing was imported, try again.`,
        );
      }
      updated.push(resource);
    }
  } catch (error) {
    await undo(created, updated, store, now);
    throw error;
  }
}

async function undo(created: readonly PlannedResource[], updated: readonly PlannedResource[], store: ConfigResourceStore, now: number): Promise<void> {
  for (const resource of [...updated].reverse()) {
    await store.update(resource.node.kind, resource.targetId, resource.targetVersion, resource.previousBodyJson!, now).catch(() => undefined);
  }
  for (const resource of [...created].reverse()) {
    await store.purge(resource.node.kind, resource.targetId).catch(() => false);
  }
}

/** One resource of a plan as the API shows it; `withNewIds` is false for a preview (new ids are made at import). */
export function resourceView(resource: PlannedResource, withNewIds: boolean): ImportedResourceView {
  const { node, action } = resource;
  const view = { originId: node.originId, kind: node.kind, name: node.name, action };
  if (action === 'CREATE' && !withNewIds) return view;
  return { ...view, targetId: resource.targetId, targetVersion: resource.targetVersion };
}
