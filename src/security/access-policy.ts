import { resourceKinds } from '../resources/kinds.ts';
import { ROLES } from './auth.ts';
import type { AccessLevel } from './access.ts';

/**
 * THE table of who may call what (DESIGN §4.18; README "Authentication and roles" prints it). Every route gets its
 * entry when it is registered (`onRoute`, `src/http/auth.ts`), which the request hook enforces and the OpenAPI
 * document shows (`x-roles`, `x-access-level`, `security`). Routes are matched by the pattern they were registered
 * with (upstream paths are rewritten to these before routing). A route no rule names gets the default by method:
 * GET/HEAD = `read`, anything else = `write`.
 *
 * Role classes (a caller needs one of the roles listed):
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
  admin: [ROLES.admin],
} as const satisfies Record<string, readonly string[]>;

export type RoleClass = keyof typeof ROLE_CLASSES;

/** Checks that need more than the caller's roles (applied while access enforcement is on, admins exempt). */
export interface RouteAccess {
  readonly roles: RoleClass;
  /** A configuration resource named by a path parameter, and the level needed on it. */
  readonly resource?: { readonly param: string; readonly level: AccessLevel };
  /** A conversation named by a path parameter: non-admins may only touch their own (userId = principal). */
  readonly conversation?: string;
  /** Who a new conversation belongs to: the `userId` query parameter (or start context), or a path parameter. */
  readonly startAs?: { readonly query: 'userId' } | { readonly param: string };
  /** Body or query checks: triggers reference only usable agents; import strategy; export download; own conversations. */
  readonly check?: 'trigger' | 'import' | 'export-download' | 'conversation-list';
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';
type Rule = readonly [methods: readonly Method[], pattern: string, access: RouteAccess];

const R = (roles: RoleClass, extra: Omit<RouteAccess, 'roles'> = {}): RouteAccess => ({ roles, ...extra });
const ALL: readonly Method[] = ['*'];
const GET: readonly Method[] = ['GET'];
const POST: readonly Method[] = ['POST'];

/** Patterns ending in `*` match every route under the prefix. First match wins. */
const RULES: readonly Rule[] = [
  // Anonymous (SPEC "Authentication" 3, plus health and the web manager's shell so that it can load and sign in).
  [GET, '/.well-known/agent.json', R('public')],
  [GET, '/.well-known/agent-card.json', R('public')],
  [GET, '/a2a/agents/:agentId/agent.json', R('public')],
  [GET, '/.well-known/capabilities', R('public')],
  [GET, '/.well-known/capabilities/skills', R('public')],
  [GET, '/q/health/live', R('public')],
  [GET, '/q/health/ready', R('public')],
  [GET, '/', R('public')],
  [GET, '/*', R('public')],
  // Any signed-in caller.
  [GET, '/workspaces', R('authenticated')],
  [GET, '/q/openapi', R('authenticated')],
  [GET, '/q/swagger-ui*', R('authenticated')],
  [GET, '/a2a/agents', R('authenticated')],
  // Admin only.
  [ALL, '/secretstore/*', R('admin')],
  [ALL, '/administration/logs*', R('admin')],
  [ALL, '/llm/tools/*', R('admin')],
  [ALL, '/auditstore/*', R('admin')],
  [['DELETE'], '/conversationstore/conversations', R('admin')],
  // Operations.
  [GET, '/q/metrics', R('read')],
  // Conversations (agent paths, older bot paths, the conversation store).
  [POST, '/agents/:agentId/start', R('converse', { resource: { param: 'agentId', level: 'USE' }, startAs: { query: 'userId' } })],
  [POST, '/agents/:conversationId*', R('converse', { conversation: 'conversationId' })],
  [GET, '/agents/:conversationId*', R('conversation-read', { conversation: 'conversationId' })],
  [GET, '/conversationstore/conversations', R('conversation-read', { check: 'conversation-list' })],
  [GET, '/conversationstore/conversations/*', R('conversation-read', { conversation: 'conversationId' })],
  [['DELETE'], '/conversationstore/conversations/:conversationId', R('converse', { conversation: 'conversationId' })],
  [POST, '/bots/:environment/:botId', R('converse', { resource: { param: 'botId', level: 'USE' }, startAs: { query: 'userId' } })],
  [POST, '/bots/*', R('converse', { conversation: 'conversationId' })],
  [GET, '/bots/*', R('conversation-read', { conversation: 'conversationId' })],
  [ALL, '/managedbots/:intent/:userId*', R('converse', { startAs: { param: 'userId' } })],
  // Managed-agent triggers.
  [['POST', 'PUT'], '/bottriggerstore/bottriggers*', R('write', { check: 'trigger' })],
  // Agent-to-agent tasks and MCP (both converse with agents).
  [POST, '/a2a/agents/:agentId', R('converse', { resource: { param: 'agentId', level: 'USE' } })],
  [ALL, '/mcp', R('converse')],
  // Deployment.
  [POST, '/administration/:environment/deploy/:agentId', R('write', { resource: { param: 'agentId', level: 'EDIT' } })],
  [POST, '/administration/:environment/undeploy/:agentId', R('write', { resource: { param: 'agentId', level: 'EDIT' } })],
  // Export and import.
  [POST, '/backup/export/:agentId', R('write', { resource: { param: 'agentId', level: 'USE' } })],
  [GET, '/backup/export/:file', R('write', { check: 'export-download' })],
  [POST, '/backup/import*', R('write', { check: 'import' })],
  // Descriptors, grants and visibility.
  [GET, '/descriptorstore/descriptors/:id', R('read', { resource: { param: 'id', level: 'USE' } })],
  [['PATCH'], '/descriptorstore/descriptors/:id', R('write', { resource: { param: 'id', level: 'EDIT' } })],
  [GET, '/descriptorstore/descriptors/:id/grants', R('read', { resource: { param: 'id', level: 'OWN' } })],
  [['PUT'], '/descriptorstore/descriptors/:id/*', R('write', { resource: { param: 'id', level: 'OWN' } })],
  // The eight configuration stores (same rules for each).
  ...resourceKinds.flatMap((kind): Rule[] => [
    [GET, `${kind.storePath}/descriptors`, R('read')],
    [GET, `${kind.storePath}/jsonSchema`, R('read')],
    [GET, `${kind.storePath}/:id`, R('read', { resource: { param: 'id', level: 'USE' } })],
    [['GET', 'POST'], `${kind.storePath}/:id/currentversion`, R('read', { resource: { param: 'id', level: 'USE' } })],
    [['PUT'], `${kind.storePath}/:id`, R('write', { resource: { param: 'id', level: 'EDIT' } })],
    [POST, `${kind.storePath}/:id`, R('write', { resource: { param: 'id', level: 'EDIT' } })],
    [['DELETE'], `${kind.storePath}/:id`, R('write', { resource: { param: 'id', level: 'OWN' } })],
  ]),
];

function matches(pattern: string, url: string): boolean {
  return pattern.endsWith('*') && pattern !== '/*' ? url.startsWith(pattern.slice(0, -1)) : pattern === url;
}

/** The access entry of a route (by its registered pattern and method; HEAD is a GET). */
export function routeAccess(method: string, url: string): RouteAccess {
  const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  for (const [methods, pattern, access] of RULES) {
    if ((methods.includes('*') || methods.includes(verb as Method)) && matches(pattern, url)) return access;
  }
  return R(verb === 'GET' ? 'read' : 'write');
}

/** The roles that satisfy a class, for messages and the OpenAPI document. */
export function rolesOf(roles: RoleClass): readonly string[] {
  return ROLE_CLASSES[roles];
}

/** The table as rows, for the README and tests: method, pattern, roles, per-resource rule. */
export function accessTable(): { methods: string; pattern: string; roles: RoleClass; rule: string }[] {
  return RULES.map(([methods, pattern, access]) => ({
    methods: methods.join(', '),
    pattern,
    roles: access.roles,
    rule: [
      access.resource ? `${access.resource.level} on :${access.resource.param}` : '',
      access.conversation ? 'own conversations' : '',
      access.startAs ? 'start as oneself' : '',
      access.check ?? '',
    ].filter(Boolean).join('; '),
  }));
}
