import type { ValidateFunction } from 'ajv';
import { formatJsonPath, referenceSlots } from '../backup/references.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import {
  atLeast,
  grantsToStore,
  parseGrants,
  type AccessLevel,
  type CallerAccess,
  type StoredGrant,
  type Visibility,
} from '../security/access.ts';
import { isId, newId } from '../ids.ts';
import type {
  ConfigResourceStore,
  DescriptorAccessChange,
  DescriptorOrigin,
  DescriptorRecord,
} from '../storage/ports.ts';
import type { ResourceCatalogue } from './catalogue.ts';
import { kindNamed, kindOfUriType, type ResourceKind } from './kinds.ts';
import { dropUnavailableFields } from './upstream-fields.ts';
import { readBody } from './upstream-migrations.ts';
import { formatReference, parseReference } from './uri.ts';
import { compileBodyValidator, describeSchemaError } from './validation.ts';

/** A descriptor as it goes on the wire (null and unset fields omitted). */
export interface DescriptorView {
  readonly resource: string;
  readonly name: string;
  readonly description: string;
  readonly createdOn: number;
  readonly lastModifiedOn: number;
  readonly deleted: boolean;
  readonly originId?: string;
  readonly ownerId?: string;
  readonly spaceId?: string;
  readonly visibility?: string;
  /** The grant list; shown to callers at the owner level only. */
  readonly grants?: readonly { readonly principal: string; readonly level: string }[];
  /** The calling user's access level; present only while access enforcement is on (never stored). */
  readonly callerLevel?: string;
}

export interface DescriptorListQuery {
  readonly filter?: string | undefined;
  readonly index?: number | undefined;
  readonly limit?: number | undefined;
  readonly space?: string | undefined;
}

/** One instruction of an upstream-style PATCH (`[{"operation": "SET", "document": {...}}]`). */
export interface PatchInstruction {
  readonly operation: 'SET' | 'DELETE';
  readonly document: unknown;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 10_000;

/**
 * The versioned configuration stores: validation (aliases, schema, semantic rules), versioning and descriptors.
 * Bodies are kept as the JSON text of their validated form, so reads return exactly what was stored.
 *
 * Operations take the caller (`request.caller`; undefined while authentication is off) and decide the access
 * level it needs while enforcement is on: reading needs USE, changing and duplicating EDIT, deleting and changing
 * who may use it OWN. A caller without any level gets 404 (the resource's existence is not disclosed), one with
 * a level too low 403 (`CallerAccess.require`).
 */
export class ResourceService {
  readonly #store: ConfigResourceStore;
  readonly #clock: () => number;
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #purgeListeners: Array<(kind: string, id: string) => Promise<void>> = [];
  /** The kinds' body contracts (the workflow's derived from the registered tasks). */
  readonly catalogue: ResourceCatalogue;

  constructor(store: ConfigResourceStore, catalogue: ResourceCatalogue, clock: () => number = Date.now) {
    this.#store = store;
    this.#clock = clock;
    this.catalogue = catalogue;
    for (const kind of catalogue.all) this.#validators.set(kind.name, compileBodyValidator(kind.schema));
  }

  /** Runs `listener` after a resource was removed for good (what other services keep for it goes too). */
  onPurged(listener: (kind: string, id: string) => Promise<void>): void {
    this.#purgeListeners.push(listener);
  }

  /** Translates aliases and checks a body; returns the body in the spec's names. Throws `invalid` naming the problem. */
  validate(kindFacts: ResourceKind, rawBody: unknown): unknown {
    const kind = this.catalogue.named(kindFacts.name);
    if (rawBody === null || typeof rawBody !== 'object' || Array.isArray(rawBody)) {
      throw invalid(`A ${kind.title} must be a JSON object.`, { path: '$' });
    }
    const body = dropUnavailableFields(kind.name, readBody(kind, rawBody));
    const validator = this.#validators.get(kind.name)!;
    if (!validator(body)) throw describeSchemaError(validator.errors![0]!, kind.title);
    const problems = kind.checkSemantics(body);
    if (problems.length > 0) {
      const [first] = problems;
      throw invalid(`Invalid ${kind.title} at ${first!.path}: ${first!.message}`, {
        path: first!.path,
        problems: problems.map((p) => ({ path: p.path, message: p.message })),
      });
    }
    return body;
  }

  async create(kindName: string, rawBody: unknown, origin: DescriptorOrigin = {}, caller?: CallerAccess) {
    const kind = kindNamed(kindName);
    const body = this.validate(kind, rawBody);
    await this.#authorizeReferences(kind, body, caller);
    const id = newId();
    await this.#store.create({
      kind: kind.name,
      id,
      bodyJson: JSON.stringify(body),
      now: this.#clock(),
      name: '',
      description: '',
      origin,
    });
    return { id, version: 1, uri: formatReference(kind.uriType, kind.storePath, id, 1) };
  }

  /** The stored JSON text of one version. */
  async read(kindName: string, id: string, version: number, caller?: CallerAccess): Promise<string> {
    const kind = kindNamed(kindName);
    checkId(id);
    await this.authorize(id, caller, 'USE');
    const json = await this.#store.read(kind.name, id, version);
    if (json === undefined) throw notFound(`No ${kind.title} with id ${id} and version ${version}.`);
    return json;
  }

  async update(kindName: string, id: string, expectedVersion: number, rawBody: unknown, caller?: CallerAccess) {
    const kind = kindNamed(kindName);
    checkId(id);
    await this.authorize(id, caller, 'EDIT');
    const body = this.validate(kind, rawBody);
    await this.#authorizeReferences(kind, body, caller);
    const outcome = await this.#store.update(kind.name, id, expectedVersion, JSON.stringify(body), this.#clock());
    if (outcome.status === 'not-found') throw notFound(`No ${kind.title} with id ${id}.`);
    if (outcome.status === 'stale') throw staleVersion(kind, id, expectedVersion, outcome.currentVersion);
    return { id, version: outcome.version, uri: formatReference(kind.uriType, kind.storePath, id, outcome.version) };
  }

  /**
   * Upstream 6.x partial update of version n: each instruction's document lists entries of the kind's
   * `patchLists`; SET replaces the entries with the same identity or adds them at the end, DELETE removes them.
   * The result is checked and stored as version n+1 exactly like an update (n must be the current version).
   */
  async patch(
    kindName: string,
    id: string,
    expectedVersion: number,
    instructions: readonly PatchInstruction[],
    caller?: CallerAccess,
  ) {
    const kind = this.catalogue.named(kindName);
    const lists = kind.patchLists;
    if (lists === undefined) throw invalid(`A ${kind.title} cannot be patched; replace it with PUT.`);
    checkId(id);
    await this.authorize(id, caller, 'EDIT');
    const body = JSON.parse(await this.read(kind.name, id, expectedVersion)) as Record<string, unknown>;
    instructions.forEach(({ operation, document }, i) => {
      const patch = this.validate(kind, document) as Record<string, unknown>;
      const other = Object.keys(patch).find((field) => !(field in lists));
      if (other !== undefined) {
        throw invalid(
          `A PATCH of a ${kind.title} edits only ${Object.keys(lists).join(', ')}; '${other}' (instruction ${i}) needs a PUT.`,
          { path: `$[${i}].document.${other}` },
        );
      }
      for (const [field, identity] of Object.entries(lists)) {
        const entries = patch[field] as Record<string, unknown>[] | undefined;
        if (entries === undefined) continue;
        const named = new Set(entries.map(identity));
        const kept = ((body[field] ?? []) as Record<string, unknown>[]).filter((entry) => !named.has(identity(entry)));
        body[field] = operation === 'SET' ? [...kept, ...entries] : kept;
      }
    });
    return this.update(kind.name, id, expectedVersion, body, caller);
  }

  async delete(
    kindName: string,
    id: string,
    version: number,
    permanent: boolean,
    caller?: CallerAccess,
  ): Promise<void> {
    const kind = kindNamed(kindName);
    checkId(id);
    await this.authorize(id, caller, 'OWN');
    if (permanent) {
      if (!(await this.#store.purge(kind.name, id))) throw notFound(`No ${kind.title} with id ${id}.`);
      for (const listener of this.#purgeListeners) await listener(kind.name, id);
      return;
    }
    const outcome = await this.#store.softDelete(kind.name, id, version, this.#clock());
    if (outcome.status === 'not-found') throw notFound(`No ${kind.title} with id ${id}.`);
    if (outcome.status === 'stale') throw staleVersion(kind, id, version, outcome.currentVersion);
  }

  async currentVersion(kindName: string, id: string, caller?: CallerAccess): Promise<number> {
    const kind = kindNamed(kindName);
    checkId(id);
    await this.authorize(id, caller, 'USE');
    return (await this.#liveDescriptor(kind, id)).currentVersion;
  }

  /** Copies one version into a new resource (version 1) with the same name and description. */
  async duplicate(kindName: string, id: string, version: number, origin: DescriptorOrigin = {}, caller?: CallerAccess) {
    const kind = kindNamed(kindName);
    checkId(id);
    await this.authorize(id, caller, 'EDIT');
    const json = await this.read(kind.name, id, version);
    await this.#authorizeReferences(kind, JSON.parse(json), caller);
    const source = await this.#liveDescriptor(kind, id);
    const copyId = newId();
    await this.#store.create({
      kind: kind.name,
      id: copyId,
      bodyJson: json,
      now: this.#clock(),
      name: source.name,
      description: source.description,
      origin,
    });
    return { id: copyId, version: 1, uri: formatReference(kind.uriType, kind.storePath, copyId, 1) };
  }

  /** While enforcement is on, only what the caller may see, each with the caller's level. */
  async listDescriptors(
    kindName: string,
    query: DescriptorListQuery,
    caller?: CallerAccess,
  ): Promise<DescriptorView[]> {
    const access = enforcedFor(caller);
    const kind = kindNamed(kindName);
    const index = query.index ?? 0;
    if (!Number.isInteger(index) || index < 0)
      throw invalid('index must be a non-negative integer.', { path: 'index' });
    const requested = query.limit ?? DEFAULT_PAGE_SIZE;
    const limit = requested < 1 ? MAX_PAGE_SIZE : Math.min(requested, MAX_PAGE_SIZE);
    const filter = filterText(query.filter ?? '');
    if (access === undefined) {
      const records = await this.#store.listDescriptors(kind.name, { filter, index, limit, spaceId: query.space });
      return records.map((record) => descriptorView(record));
    }
    // Only what the caller may see, paged after filtering (configuration stores hold thousands, not millions).
    const visible: DescriptorView[] = [];
    const wanted = (index + 1) * limit;
    for (let page = 0; visible.length < wanted; page += 1) {
      const records = await this.#store.listDescriptors(kind.name, {
        filter,
        index: page,
        limit: MAX_PAGE_SIZE,
        spaceId: query.space,
      });
      for (const record of records) {
        const level = access.levelOf(record);
        if (level !== undefined) visible.push(descriptorView(record, level));
      }
      if (records.length < MAX_PAGE_SIZE) break;
    }
    return visible.slice(index * limit, wanted);
  }

  async descriptor(id: string, caller?: CallerAccess): Promise<DescriptorView> {
    const record = await this.#liveRecord(id, caller, 'USE');
    return descriptorView(record, enforcedFor(caller)?.levelOf(record));
  }

  /** The live descriptor record of a resource (any kind), undefined when unknown, deleted or not an id. */
  async record(id: string): Promise<DescriptorRecord | undefined> {
    if (!isId(id)) return undefined;
    const record = await this.#store.descriptorById(id);
    return record && !record.deleted ? record : undefined;
  }

  /**
   * Throws unless the caller holds `level` on the resource with this id (nothing to check while enforcement is
   * off or for admins). Unknown ids pass: the operation answers its own 404.
   */
  async authorize(id: string, caller: CallerAccess | undefined, level: AccessLevel, what = 'resource'): Promise<void> {
    if (!caller?.restricted) return;
    const record = await this.record(id);
    if (record !== undefined) caller.require(record, level, what);
  }

  /**
   * Whether the caller sees the resource with this id at all (any level): always while no checks apply to it;
   * otherwise unknown and deleted ids are not visible either, so listings built on this disclose nothing.
   */
  async visible(id: string, caller: CallerAccess | undefined): Promise<boolean> {
    if (!caller?.restricted) return true;
    const record = await this.record(id);
    return record !== undefined && caller.levelOf(record) !== undefined;
  }

  /**
   * Throws unless the caller may use every resource a version references, followed through the references of
   * those (agent → workflows → their steps' resources → the HTTP-call sets of LLM tools, ...). Deploying and
   * exporting check this again: the references were checked when written, but grants and visibility change. A
   * reference the caller cannot use is answered as one that does not exist (409 naming it). Versions that do not
   * exist are left for the operation to report.
   */
  async authorizeReferenced(
    kindName: string,
    id: string,
    version: number,
    caller: CallerAccess | undefined,
    action: string,
  ): Promise<void> {
    if (!caller?.restricted) return;
    const pending = [{ kind: kindNamed(kindName), id, version }];
    const seen = new Set([`${id}/${version}`]);
    for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
      const json = await this.#store.read(next.kind.name, next.id, next.version);
      if (json === undefined) continue;
      for (const slot of referenceSlots(this.catalogue.named(next.kind.name), JSON.parse(json))) {
        const reference = await this.#usableReference(slot.uri, caller);
        if (reference === undefined) {
          throw conflict(
            `The ${next.kind.title} ${next.id} references '${slot.uri}', which does not exist; the agent cannot be ${action}.`,
          );
        }
        const key = `${reference.id}/${reference.version}`;
        if (!seen.has(key)) {
          seen.add(key);
          pending.push(reference);
        }
      }
    }
  }

  /**
   * While checks apply to the caller, a body may reference only live resources of the kind named that the caller
   * may use (USE); any other reference is answered as one to a resource that does not exist (400 naming it), so a
   * write discloses nothing about the resources of others.
   */
  async #authorizeReferences(kind: ResourceKind, body: unknown, caller: CallerAccess | undefined): Promise<void> {
    if (!caller?.restricted) return;
    for (const slot of referenceSlots(this.catalogue.named(kind.name), body)) {
      if ((await this.#usableReference(slot.uri, caller)) !== undefined) continue;
      const path = formatJsonPath(slot.path);
      throw invalid(
        `Invalid ${kind.title} at ${path}: '${slot.uri}' names no resource that exists for ${caller.principal.name} (USE access is needed on every resource referenced).`,
        { path },
      );
    }
    for (const { path, agentId } of this.catalogue.named(kind.name).agentTargets?.(body) ?? []) {
      const record = await this.record(agentId);
      if (record?.kind === 'agent' && atLeast(caller.levelOf(record), 'USE')) continue;
      throw invalid(
        `Invalid ${kind.title} at ${path}: '${agentId}' names no agent that exists for ${caller.principal.name} (USE access is needed on the agent).`,
        { path },
      );
    }
  }

  /** The reference when it names a live resource of its kind on which the caller holds USE. */
  async #usableReference(uri: string, caller: CallerAccess) {
    const reference = parseReference(uri);
    const kind = reference && kindOfUriType(reference.type);
    if (!reference || !kind) return undefined;
    const record = await this.record(reference.id);
    if (record?.kind !== kind.name || !atLeast(caller.levelOf(record), 'USE')) return undefined;
    return { kind, id: reference.id, version: reference.version };
  }

  /** Who else may use, edit or own a resource (owner level). */
  async grants(id: string, caller?: CallerAccess): Promise<StoredGrant[]> {
    return parseGrants((await this.#liveRecord(id, caller, 'OWN')).grants);
  }

  /**
   * Replaces the grant list (owner level) with a list `[{principal, level}]` read strictly (`parseGrantList`);
   * a grant to the owner is dropped (the owner holds OWN anyway).
   */
  async setGrants(id: string, list: unknown, caller?: CallerAccess): Promise<StoredGrant[]> {
    const record = await this.#liveRecord(id, caller, 'OWN');
    return parseGrants((await this.#setAccess(record, { grants: grantsToStore(list, record.ownerId) })).grants);
  }

  /** Sets who besides the grantees may use a resource and, optionally, moves it to one of the caller's spaces (owner level). */
  async setVisibility(
    id: string,
    change: { visibility: Visibility; spaceId?: string | undefined },
    caller?: CallerAccess,
  ): Promise<DescriptorRecord> {
    const record = await this.#liveRecord(id, caller, 'OWN');
    const spaceId =
      change.spaceId === undefined || caller === undefined ? change.spaceId : caller.origin(change.spaceId).spaceId;
    return this.#setAccess(record, { visibility: change.visibility, spaceId });
  }

  async #setAccess(record: DescriptorRecord, change: DescriptorAccessChange): Promise<DescriptorRecord> {
    const changed = await this.#store.setAccess(record.kind, record.id, change);
    if (!changed) throw notFound(`No configuration resource with id ${record.id}.`);
    return changed;
  }

  /** The live record of a resource of any kind, after the caller's level on it was checked; 404 when unknown. */
  async #liveRecord(id: string, caller: CallerAccess | undefined, level: AccessLevel): Promise<DescriptorRecord> {
    checkId(id);
    const record = await this.#store.descriptorById(id);
    if (!record || record.deleted) throw notFound(`No configuration resource with id ${id}.`);
    if (caller?.restricted) caller.require(record, level, 'resource');
    return record;
  }

  /** Renames or re-describes a resource. `expectedVersion`, when given, must be the current version. */
  async editDescriptor(
    id: string,
    changes: { name?: string | undefined; description?: string | undefined },
    expectedVersion?: number,
    caller?: CallerAccess,
  ): Promise<DescriptorView> {
    const record = await this.#liveRecord(id, caller, 'EDIT');
    const kind = kindNamed(record.kind);
    if (expectedVersion !== undefined && expectedVersion !== record.currentVersion) {
      throw staleVersion(kind, id, expectedVersion, record.currentVersion);
    }
    const edited = await this.#store.editDescriptor(record.kind, id, changes, this.#clock());
    if (!edited) throw notFound(`No configuration resource with id ${id}.`);
    return descriptorView(edited, enforcedFor(caller)?.levelOf(edited));
  }

  async #liveDescriptor(kind: ResourceKind, id: string): Promise<DescriptorRecord> {
    checkId(id);
    const record = await this.#store.descriptor(kind.name, id);
    if (!record || record.deleted) throw notFound(`No ${kind.title} with id ${id}.`);
    return record;
  }
}

/** The caller whose view of descriptors is filtered and shows `callerLevel`: only while enforcement is on. */
function enforcedFor(caller: CallerAccess | undefined): CallerAccess | undefined {
  return caller?.options.enforcement ? caller : undefined;
}

function checkId(id: string): void {
  if (!isId(id)) throw invalid(`'${id}' is not a resource id (24 lower-case hex characters).`, { path: 'id' });
}

function staleVersion(kind: ResourceKind, id: string, given: number, current: number) {
  return conflict(
    `Version ${given} of ${kind.title} ${id} is not the current version (${current}); read the current version and apply the change to it.`,
  );
}

/**
 * The descriptor filter is plain text found case-insensitively, never a regular expression: a pattern from the
 * caller could backtrack for minutes and stall the server (issue 13). Double quotes around it, which once made a
 * pattern literal, are still accepted and dropped.
 */
function filterText(filter: string): string {
  return filter.length >= 2 && filter.startsWith('"') && filter.endsWith('"') ? filter.slice(1, -1) : filter;
}

function descriptorView(record: DescriptorRecord, callerLevel?: AccessLevel): DescriptorView {
  const kind = kindNamed(record.kind);
  const view: Record<string, unknown> = {
    resource: formatReference(kind.uriType, kind.storePath, record.id, record.currentVersion),
    name: record.name,
    description: record.description,
    createdOn: record.createdOn,
    lastModifiedOn: record.lastModifiedOn,
    deleted: record.deleted,
  };
  for (const field of ['originId', 'ownerId', 'spaceId', 'visibility'] as const) {
    if (record[field] !== undefined && record[field] !== null) view[field] = record[field];
  }
  if (callerLevel !== undefined) {
    view.callerLevel = callerLevel;
    if (callerLevel === 'OWN') view.grants = parseGrants(record.grants);
  }
  return view as unknown as DescriptorView;
}
