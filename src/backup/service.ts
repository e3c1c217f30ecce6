import { AppError, notFound } from '../errors.ts';
import type { CallerAccess } from '../security/access.ts';
import type { ResourceService } from '../resources/service.ts';
import { kindNamed } from '../resources/kinds.ts';
import { formatReference } from '../resources/uri.ts';
import type { DescriptorOrigin, Storage } from '../storage/ports.ts';
import { readArchive } from './archive.ts';
import { AgentExporter } from './export.ts';
import { applyImportPlan, resourceView, type ImportedResourceView } from './import.ts';
import { planImport, type ImportOptions, type ImportPlan, type ImportStrategy } from './import-plan.ts';
import { EXPORT_FILE_PATTERN } from './layout.ts';
import { readZip, type ZipLimits } from './zip-reader.ts';

/**
 * Export and import of agents as ZIP archives (SPEC "Export and import", reference §12.3–12.4). While access
 * checks apply to the caller, exporting and downloading need USE on the agent and on everything it references
 * (`ResourceService.authorizeReferenced`), and imports only create (merge
 * and upgrade update existing resources: admins only).
 *
 * Exports are not kept: the download name encodes agent id and version, and the ZIP is built again on each
 * download, so it always matches the stored configuration and nothing accumulates in memory or on disk.
 */

export interface BackupServiceOptions {
  /** Its resource store; an import is written in one of its transactions. */
  readonly storage: Pick<Storage, 'resources' | 'transaction'>;
  readonly resources: ResourceService;
  readonly limits: ZipLimits;
  /** Deepest nesting accepted in a JSON file of the archive (`svc.http.max-json-depth`). */
  readonly maxJsonDepth: number;
  readonly clock?: () => number;
}

export interface ImportPreview {
  readonly strategy: ImportStrategy;
  readonly agent: ImportedResourceView;
  readonly resources: readonly ImportedResourceView[];
  readonly ignoredEntries: readonly string[];
}

export interface ImportResult extends ImportPreview {
  readonly agentId: string;
  readonly agentVersion: number;
  /** `svc://ai.svc.agent/agentstore/agents/<id>?version=<n>`, also sent as `Location`. */
  readonly location: string;
}

export class BackupService {
  readonly #options: BackupServiceOptions;
  readonly #exporter: AgentExporter;
  readonly #clock: () => number;

  constructor(options: BackupServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#exporter = new AgentExporter(options.storage.resources, options.resources.catalogue, this.#clock);
  }

  /** Checks that the agent version exists and can be exported; returns the download name `<agentId>-<version>.zip`. */
  async exportAgent(agentId: string, version?: number, caller?: CallerAccess): Promise<string> {
    const { resources } = this.#options;
    await resources.authorize(agentId, caller, 'USE');
    const chosen = await this.#exporter.resolveVersion(agentId, version);
    await resources.authorizeReferenced('agent', agentId, chosen, caller, 'exported');
    return this.#exporter.prepare(agentId, chosen);
  }

  /** The ZIP named by a download name; 404 for any other name or an unknown agent version. */
  async download(fileName: string, caller?: CallerAccess): Promise<Uint8Array> {
    const match = EXPORT_FILE_PATTERN.exec(fileName);
    if (!match) throw notFound(`No exported archive named '${fileName}'.`);
    const [, agentId, version] = match as unknown as [string, string, string];
    await this.#options.resources.authorize(agentId, caller, 'USE', 'agent');
    const resolved = await this.#exporter.resolveVersion(agentId, Number(version)).catch(() => {
      throw notFound(`No exported archive named '${fileName}'.`);
    });
    await this.#options.resources.authorizeReferenced('agent', agentId, resolved, caller, 'exported');
    return (await this.#exporter.build(agentId, resolved)).zip;
  }

  /**
   * What an import would do; writes nothing. Without a strategy: what it would do to the resources already here,
   * matched by origin id (`merge`), for a caller who may import so; `create` for a restricted caller.
   */
  async preview(
    zip: Uint8Array,
    options: Omit<ImportOptions, 'strategy'> & Partial<ImportOptions>,
    caller?: CallerAccess,
  ): Promise<ImportPreview> {
    const strategy = options.strategy ?? (caller?.restricted ? 'create' : 'merge');
    const chosen = { ...options, strategy };
    checkStrategy(chosen, caller);
    return previewOf(await this.#plan(zip, chosen), false);
  }

  /** `owner`: owner and space recorded on the resources it creates (authentication on). */
  async import(
    zip: Uint8Array,
    options: ImportOptions,
    owner: Omit<DescriptorOrigin, 'originId'> = {},
    caller?: CallerAccess,
  ): Promise<ImportResult> {
    checkStrategy(options, caller);
    const plan = await this.#plan(zip, options);
    await applyImportPlan(plan, this.#options.storage, this.#clock(), owner);
    const { targetId, targetVersion } = plan.agent;
    const agentKind = kindNamed('agent');
    return {
      agentId: targetId,
      agentVersion: targetVersion,
      location: formatReference(agentKind.uriType, agentKind.storePath, targetId, targetVersion),
      ...previewOf(plan, true),
    };
  }

  async #plan(zip: Uint8Array, options: ImportOptions): Promise<ImportPlan> {
    const archive = readArchive(
      await readZip(zip, this.#options.limits),
      this.#options.resources.catalogue,
      this.#options.maxJsonDepth,
    );
    const { resources } = this.#options;
    return planImport(
      archive,
      options,
      this.#options.storage.resources,
      (kind, body) => resources.validate(kind, body),
      resources.catalogue,
    );
  }
}

function checkStrategy(options: ImportOptions, caller: CallerAccess | undefined): void {
  if (caller?.restricted && options.strategy !== 'create') {
    throw new AppError(
      'forbidden',
      `Only an admin may import with strategy '${options.strategy}' (it updates existing resources); use strategy=create.`,
    );
  }
}

function previewOf(plan: ImportPlan, withNewIds: boolean): ImportPreview {
  return {
    strategy: plan.strategy,
    agent: resourceView(plan.agent, withNewIds),
    resources: plan.resources.filter((r) => r !== plan.agent).map((r) => resourceView(r, withNewIds)),
    ignoredEntries: plan.ignoredEntries,
  };
}
