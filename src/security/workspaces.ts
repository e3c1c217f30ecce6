import type { Principal } from './auth.ts';

/**
 * Workspaces (SPEC "Workspace capability record", DESIGN §4.12). A workspace ("space") groups resources:
 *
 * - every user has a personal space `user:<principal>`; it is where new resources go (the default write space);
 * - with `svc.workspaces.enabled`, every group in the caller's token (`groups` claim) is a shared space
 *   `group:<name>`; a resource created with `?space=group:<name>` lives there, and a resource whose visibility is
 *   `space` can be used (level USE) by every member of its space.
 *
 * Spaces are not stored anywhere: they follow from the token, so an identity provider's groups are the one truth.
 */

export const PERSONAL_PREFIX = 'user:';
export const GROUP_PREFIX = 'group:';

export interface Space {
  readonly id: string;
  readonly name: string;
  readonly type: 'personal' | 'group';
}

export const personalSpace = (principal: string) => `${PERSONAL_PREFIX}${principal}`;

/** The spaces a caller can reach: the personal one, plus the token's groups when workspaces are on. */
export function spacesOf(principal: Principal, workspacesEnabled: boolean): Space[] {
  const personal: Space = { id: personalSpace(principal.name), name: principal.name, type: 'personal' };
  if (!workspacesEnabled) return [personal];
  const groups = [...new Set(principal.groups)]
    .sort()
    .map((group): Space => ({ id: `${GROUP_PREFIX}${group}`, name: group, type: 'group' }));
  return [personal, ...groups];
}

/** `GET /workspaces`: what the calling user is and may reach (DESIGN §4.12). */
export interface WorkspaceCapabilities {
  /** Whether access levels are enforced for this caller's requests. */
  readonly enforcementActive: boolean;
  /** The value stamped as owner on what the caller creates; null without authentication. */
  readonly principal: string | null;
  /** Where the caller's new resources go; null without authentication. */
  readonly defaultWriteSpace: string | null;
  readonly spaces: readonly Space[];
  /** Admins (and everybody while enforcement is off) see every resource. */
  readonly seesEverything: boolean;
}

export function workspaceCapabilities(
  principal: Principal | undefined,
  options: { enforcement: boolean; workspacesEnabled: boolean; isAdmin: boolean },
): WorkspaceCapabilities {
  if (principal === undefined) {
    return { enforcementActive: false, principal: null, defaultWriteSpace: null, spaces: [], seesEverything: true };
  }
  return {
    enforcementActive: options.enforcement,
    principal: principal.name,
    defaultWriteSpace: personalSpace(principal.name),
    spaces: spacesOf(principal, options.workspacesEnabled),
    seesEverything: !options.enforcement || options.isAdmin,
  };
}
