import type { AccessLevel } from './access.ts';
import { ROLES } from './auth.ts';

/**
 * Role classes (DESIGN §4.18): every route names one in its options, `config: { access: { roles: 'write' } }`,
 * and a caller needs one of the roles of that class. The auth plugin (`src/http/auth.ts`) checks them; a route
 * without a declaration stops start-up.
 */
export const ROLE_CLASSES = {
  /** No token needed (agent cards, capability reads, health, the manager's shell and assets). */
  public: [],
  /** Any valid token, whatever its roles. */
  authenticated: [],
  read: [ROLES.admin, ROLES.editor, ROLES.viewer],
  'conversation-read': [ROLES.admin, ROLES.editor, ROLES.user, ROLES.viewer],
  converse: [ROLES.admin, ROLES.editor, ROLES.user],
  write: [ROLES.admin, ROLES.editor],
  /** Human in the loop: the waiting turns and the decisions on them. */
  approve: [ROLES.admin, ROLES.editor, ROLES.approver],
  admin: [ROLES.admin],
} as const satisfies Record<string, readonly string[]>;

export type RoleClass = keyof typeof ROLE_CLASSES;

/**
 * Who may call a route. `roles` is checked at the door; `level` and `rule` document what the service behind the
 * route checks for non-admins while access enforcement is on (the level needed on the resource the route names,
 * other ownership rules): they feed the OpenAPI document (`x-access-level`) and the README's access table.
 */
export interface RouteAccess {
  readonly roles: RoleClass;
  readonly level?: AccessLevel;
  readonly rule?: string;
  /** The route also takes an API key as its bearer token (the OpenAI-compatible `/v1` paths). */
  readonly apiKeys?: boolean;
}

/** The roles that satisfy a class (empty for `public` and `authenticated`). */
export function rolesOf(roles: RoleClass): readonly string[] {
  return ROLE_CLASSES[roles];
}

/** Whether a caller holding `held` passes the role check of the class. */
export function hasRoleOf(roles: RoleClass, held: ReadonlySet<string>): boolean {
  return roles === 'public' || roles === 'authenticated' || rolesOf(roles).some((role) => held.has(role));
}

/** The OpenAPI extension fields of an operation with this access. */
export function openApiAccess(access: RouteAccess): Record<string, unknown> {
  return {
    'x-roles': [...rolesOf(access.roles)],
    'x-access': access.roles,
    ...(access.level ? { 'x-access-level': access.level } : {}),
    security: access.roles === 'public' ? [] : [{ bearer: [] }],
  };
}
