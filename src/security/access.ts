import { AppError, invalid } from '../errors.ts';
import type { DescriptorOrigin, DescriptorRecord } from '../storage/ports.ts';
import { ROLES, type Principal } from './auth.ts';
import { personalSpace, spacesOf, type Space } from './workspaces.ts';

/**
 * Access levels per resource (SPEC "Authentication" 5, DESIGN §4.12): `USE` (converse with it, read it) <
 * `EDIT` (change, duplicate, deploy it) < `OWN` (delete it, change who may use it).
 *
 * A caller's level on a resource is the highest of:
 * - `OWN` for an admin (`svc-admin`), and for the owner (`ownerId` = the caller's principal);
 * - `EDIT` on a resource without an owner (created while authentication was off: it stays open to every editor);
 * - the level of a grant naming the caller's principal (grants are `[{principal, level}]`);
 * - `USE` when the resource's visibility is `public`, or `space` and the caller reaches its space (workspaces).
 * No level at all means the resource is invisible to the caller (listings leave it out, a read is a 404).
 */

export const LEVELS = ['USE', 'EDIT', 'OWN'] as const;
export type AccessLevel = (typeof LEVELS)[number];

export const VISIBILITIES = ['private', 'space', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export interface Grant {
  readonly principal: string;
  readonly level: AccessLevel;
}

/** A grant as stored (levels as written; a level this service does not know grants nothing). */
export interface StoredGrant {
  readonly principal: string;
  readonly level: string;
}

const rank = (level: AccessLevel | undefined): number => (level === undefined ? 0 : LEVELS.indexOf(level) + 1);
export const atLeast = (held: AccessLevel | undefined, needed: AccessLevel): boolean => rank(held) >= rank(needed);
const higher = (a: AccessLevel | undefined, b: AccessLevel | undefined) => (rank(a) >= rank(b) ? a : b);

export interface AccessOptions {
  /** Access levels are enforced (authentication on and `svc.authorization.enabled` or `svc.workspaces.enabled`). */
  readonly enforcement: boolean;
  /** Group spaces and `space` visibility (`svc.workspaces.enabled`). */
  readonly workspacesEnabled: boolean;
}

/** What decides a caller's level on something with an owner: a configuration resource's descriptor, a trigger. */
export type AccessFields = Pick<DescriptorRecord, 'ownerId' | 'spaceId' | 'visibility' | 'grants'>;

/** One authenticated caller's view of resources. */
export class CallerAccess {
  readonly principal: Principal;
  readonly options: AccessOptions;
  readonly spaces: readonly Space[];
  readonly #spaceIds: ReadonlySet<string>;

  constructor(principal: Principal, options: AccessOptions) {
    this.principal = principal;
    this.options = options;
    this.spaces = spacesOf(principal, options.workspacesEnabled);
    this.#spaceIds = new Set(this.spaces.map((space) => space.id));
  }

  get isAdmin(): boolean {
    return this.principal.roles.has(ROLES.admin);
  }

  /** Whether checks apply to this caller (enforcement on, and not an admin). */
  get restricted(): boolean {
    return this.options.enforcement && !this.isAdmin;
  }

  get defaultWriteSpace(): string {
    return personalSpace(this.principal.name);
  }

  levelOf(record: AccessFields): AccessLevel | undefined {
    if (this.isAdmin || record.ownerId === this.principal.name) return 'OWN';
    let level: AccessLevel | undefined = record.ownerId === undefined ? 'EDIT' : undefined;
    for (const grant of parseGrants(record.grants)) {
      if (grant.principal === this.principal.name && isLevel(grant.level)) level = higher(level, grant.level);
    }
    const visibility = record.visibility ?? 'private';
    if (visibility === 'public') level = higher(level, 'USE');
    if (
      visibility === 'space' &&
      this.options.workspacesEnabled &&
      record.spaceId !== undefined &&
      this.#spaceIds.has(record.spaceId)
    ) {
      level = higher(level, 'USE');
    }
    return level;
  }

  /**
   * Throws unless the caller holds `needed` on the resource: 404 when the caller cannot see it at all (its
   * existence is not disclosed), 403 naming the level held and the level needed otherwise.
   */
  require(record: AccessFields & { readonly id: string }, needed: AccessLevel, what: string): void {
    if (!this.restricted) return;
    const held = this.levelOf(record);
    if (held === undefined) throw new AppError('not-found', `No ${what} with id ${record.id}.`);
    if (!atLeast(held, needed)) {
      throw new AppError(
        'forbidden',
        `This needs ${needed} access to ${what} ${record.id}; ${this.principal.name} holds ${held}.`,
        { neededLevel: needed, callerLevel: held },
      );
    }
  }

  /** Throws unless the caller may converse as `userId`: while checks apply, only as themselves. */
  requireSelf(userId: string | undefined): void {
    if (!this.restricted || userId === undefined || userId === '' || userId === this.principal.name) return;
    throw new AppError('forbidden', `${this.principal.name} may only converse as themselves, not as '${userId}'.`);
  }

  /** Owner and space stamped on what the caller creates; `space` (optional) must be one of the caller's spaces. */
  origin(space?: string): DescriptorOrigin {
    if (space !== undefined && space !== '' && !this.#spaceIds.has(space)) {
      throw new AppError(
        'forbidden',
        `${this.principal.name} cannot write to space '${space}'; reachable spaces: ${[...this.#spaceIds].join(', ')}.`,
      );
    }
    return { ownerId: this.principal.name, spaceId: space || this.defaultWriteSpace, visibility: 'private' };
  }
}

/** Checks the caller's level on the configuration resource with this id (`ResourceService.authorize`). */
export type AuthorizeResource = (
  id: string,
  caller: CallerAccess | undefined,
  level: AccessLevel,
  what?: string,
) => Promise<void>;

/** Checks that the caller may use everything a resource version references (`ResourceService.authorizeReferenced`). */
export type AuthorizeReferenced = (
  kind: string,
  id: string,
  version: number,
  caller: CallerAccess | undefined,
  action: string,
) => Promise<void>;

/** Whether the caller sees the configuration resource with this id at all (`ResourceService.visible`). */
export type ResourceVisible = (id: string, caller: CallerAccess | undefined) => Promise<boolean>;

export function isLevel(value: unknown): value is AccessLevel {
  return typeof value === 'string' && (LEVELS as readonly string[]).includes(value);
}

const MAX_GRANTS = 1000;

/** Reads a grant list `[{principal, level}]` (strict: unknown members are a 400). A principal named twice keeps its highest level. */
export function parseGrantList(body: unknown): Grant[] {
  if (!Array.isArray(body)) throw invalid('The grant list must be a JSON array of {principal, level}.', { path: '$' });
  if (body.length > MAX_GRANTS) throw invalid(`At most ${MAX_GRANTS} grants per resource.`, { path: '$' });
  const byPrincipal = new Map<string, AccessLevel>();
  body.forEach((entry: unknown, index) => {
    const path = `$[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw invalid(`${path} must be an object {principal, level}.`, { path });
    const unknown = Object.keys(entry).find((key) => key !== 'principal' && key !== 'level');
    if (unknown !== undefined)
      throw invalid(`Unknown field '${unknown}' at ${path}.`, {
        path: `${path}.${unknown}`,
        additionalProperty: unknown,
      });
    const { principal, level } = entry as { principal?: unknown; level?: unknown };
    if (typeof principal !== 'string' || principal.trim() === '' || principal.length > 200) {
      throw invalid(`${path}.principal must be a user name (1 to 200 characters).`, { path: `${path}.principal` });
    }
    if (!isLevel(level)) throw invalid(`${path}.level must be one of ${LEVELS.join(', ')}.`, { path: `${path}.level` });
    byPrincipal.set(principal, higher(byPrincipal.get(principal), level)!);
  });
  return [...byPrincipal].map(([principal, level]) => ({ principal, level }));
}

/** The grant list to store (JSON text) for something owned by `ownerId`: read strictly, a grant to the owner dropped. */
export function grantsToStore(list: unknown, ownerId: string | undefined): string {
  return JSON.stringify(parseGrantList(list).filter((grant) => grant.principal !== ownerId));
}

/** The stored grant list (JSON text); anything unreadable counts as no grants. */
export function parseGrants(json: string | undefined): StoredGrant[] {
  if (json === undefined || json === '') return [];
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed)
      ? parsed
          .filter(
            (g): g is { principal: string; level: string } =>
              typeof g?.principal === 'string' && typeof g?.level === 'string',
          )
          .map(({ principal, level }) => ({ principal, level }))
      : [];
  } catch {
    return [];
  }
}
