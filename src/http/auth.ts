import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { AppError } from '../errors.ts';
import { isId } from '../ids.ts';
import { parseTrigger } from '../integrations/managed/triggers.ts';
import type { ResourceService } from '../resources/service.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import { CallerAccess } from '../security/access.ts';
import { rolesOf, routeAccess, type RouteAccess } from '../security/access-policy.ts';
import { AuthenticationError, bearerToken, createAuthenticator, type Authenticator, type Principal } from '../security/auth.ts';
import type { CallerIdentity } from '../security/auth-caller.ts';
import type { Settings } from '../settings.ts';
import type { DescriptorOrigin } from '../storage/ports.ts';
import { problem, sendProblem } from './problems.ts';
import { parseStartBody } from './conversations.ts';

/**
 * Authentication and authorisation at the root of the application (SPEC "Authentication", DESIGN §4.12/§4.18).
 *
 * - `onRoute`: every route gets its entry of the access table (`src/security/access-policy.ts`) in its config
 *   and in its OpenAPI operation (`x-roles`, `x-access-level`, `security: bearer`).
 * - `onRequest` (only with `svc.oidc.tenant-enabled`): anonymous routes pass; every other request needs a valid
 *   bearer token (else a bare 401 problem with `WWW-Authenticate: Bearer`, no redirect) and one of the roles of
 *   its class (else 403 naming them). With enforcement on, per-resource levels are checked next (404 when the
 *   caller cannot see the resource, 403 when the level is too low), and conversations are the caller's own.
 * - `preHandler`: the checks that need a body (trigger references, the start context's userId).
 *
 * Registered as a root-level plugin (not encapsulated), so its hooks and decorations apply to every route
 * registered after it. The token never reaches a log: pino redacts the header, and nothing here logs it.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller (undefined while authentication is off, and on anonymous routes). */
    caller?: CallerAccess | undefined;
    /** What `${caller:…}` placeholders of HTTP calls may send for this request (see `callerIdentityOf`). */
    callerIdentity?: CallerIdentity | undefined;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

export interface AuthPluginOptions {
  readonly settings: Settings;
  readonly resources: ResourceService;
  readonly conversations: ConversationService;
  /** Replaces the OIDC verifier (tests of this plugin alone). */
  readonly authenticator?: Authenticator;
}

/** Whether authentication is on and the settings it needs are there; throws naming a missing one. */
function authenticatorOf(options: AuthPluginOptions): Authenticator | undefined {
  const { settings } = options;
  if (!settings['svc.oidc.tenant-enabled']) return undefined;
  if (options.authenticator) return options.authenticator;
  const issuer = settings['svc.oidc.auth-server-url'];
  const audience = settings['svc.oidc.client-id'];
  if (!issuer || !audience) {
    throw new Error('svc.oidc.tenant-enabled is on, so svc.oidc.auth-server-url (the issuer) and svc.oidc.client-id (the audience) must be set.');
  }
  return createAuthenticator({ issuer, audience, clockToleranceSeconds: settings['svc.oidc.clock-tolerance-seconds'] });
}

const unauthorized = (reply: FastifyReply, detail: string) =>
  sendProblem(reply, problem(401, detail), { 'WWW-Authenticate': 'Bearer' });

function forbiddenByRole(access: RouteAccess, principal: Principal): AppError {
  const roles = rolesOf(access.roles);
  return new AppError('forbidden', `This operation needs the role ${roles.join(' or ')}; ${principal.name} has ${principal.roles.size === 0 ? 'no role of this service' : [...principal.roles].join(', ')}.`, { neededRoles: [...roles] });
}

const forbidden = (message: string) => new AppError('forbidden', message);

async function authPlugin(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const { settings, resources, conversations } = options;
  const authenticator = authenticatorOf(options);
  const accessOptions = {
    enforcement: authenticator !== undefined && (settings['svc.authorization.enabled'] || settings['svc.workspaces.enabled']),
    workspacesEnabled: settings['svc.workspaces.enabled'],
  };
  if (!authenticator && (settings['svc.authorization.enabled'] || settings['svc.workspaces.enabled'])) {
    app.log.warn('svc.authorization.enabled / svc.workspaces.enabled need authentication (svc.oidc.tenant-enabled); nothing is enforced');
  }

  app.decorateRequest('caller', undefined);
  app.decorateRequest('callerIdentity', undefined);

  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const access = routeAccess(String(methods[0]), route.url ?? '/');
    route.config = { ...(route.config ?? {}), access };
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    route.schema = {
      ...schema,
      'x-roles': access.roles === 'public' ? [] : [...rolesOf(access.roles)],
      'x-access': access.roles,
      ...(access.resource ? { 'x-access-level': access.resource.level } : {}),
      security: access.roles === 'public' ? [] : [{ bearer: [] }],
    } as FastifySchema;
  });

  if (!authenticator) return;

  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config.access ?? routeAccess(request.method, request.routeOptions.url ?? '');
    // An unknown path (no route) still needs a token: nobody learns what exists without one.
    if (request.routeOptions.url !== undefined && access.roles === 'public') return;
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) return unauthorized(reply, 'Authentication is required: send Authorization: Bearer <access token>.');
    let principal: Principal;
    try {
      principal = await authenticator.authenticate(token);
    } catch (error) {
      const detail = error instanceof AuthenticationError ? error.message : 'The token could not be verified.';
      return unauthorized(reply, `The bearer token was refused: ${detail}`);
    }
    const caller = new CallerAccess(principal, accessOptions);
    request.caller = caller;
    request.callerIdentity = callerIdentityOf(request, settings);
    const needed = rolesOf(access.roles);
    if (access.roles !== 'authenticated' && access.roles !== 'public' && !needed.some((role) => principal.roles.has(role))) {
      throw forbiddenByRole(access, principal);
    }
    const params = (request.params ?? {}) as Record<string, string | undefined>;
    if (access.startAs && 'param' in access.startAs) checkStartAs(caller, params[access.startAs.param]);
    if (!caller.restricted) return;
    if (access.resource) {
      const record = await resources.record(params[access.resource.param] ?? '');
      // Unknown ids go on to the route, which answers 404 (or 400 for a malformed id) as it always does.
      if (record !== undefined) caller.require(record, access.resource.level, 'resource');
    }
    if (access.conversation) {
      const conversationId = params[access.conversation];
      if (conversationId !== undefined && isId(conversationId)) {
        const conversation = await conversations.get(conversationId).catch(() => undefined);
        if (conversation !== undefined && conversation.userId !== principal.name) {
          throw forbidden(`Conversation ${conversationId} belongs to another user; ${principal.name} may only use their own conversations.`);
        }
      }
    }
    if (access.check === 'conversation-list') {
      const query = request.query as { userId?: string };
      if (query.userId !== undefined && query.userId !== principal.name) throw forbidden(`${principal.name} may only list their own conversations.`);
      query.userId = principal.name;
    }
    if (access.check === 'import') {
      const { strategy } = request.query as { strategy?: string };
      if (strategy !== undefined && strategy !== 'create') {
        throw forbidden(`Only an admin may import with strategy '${strategy}' (it updates existing resources); use strategy=create.`);
      }
    }
    if (access.check === 'export-download') {
      const agentId = /^([0-9a-f]{24})-\d+\.zip$/.exec(params['file'] ?? '')?.[1];
      const record = agentId === undefined ? undefined : await resources.record(agentId);
      if (record !== undefined) caller.require(record, 'USE', 'agent');
    }
  });

  app.addHook('preHandler', async (request) => {
    const caller = request.caller;
    const access = request.routeOptions.config.access;
    if (caller === undefined || access === undefined) return;
    if (access.startAs && 'query' in access.startAs) {
      // The conversation's user: the userId query parameter, else the start context's userId, else the caller.
      const query = request.query as { userId?: string };
      const fromContext = startContextUserId(request.body);
      if (query.userId === undefined || query.userId === '') query.userId = fromContext ?? caller.principal.name;
      checkStartAs(caller, query.userId);
      if (fromContext !== undefined) checkStartAs(caller, fromContext);
    }
    if (access.check === 'trigger' && caller.restricted) {
      let agentIds: string[];
      try {
        agentIds = parseTrigger(request.body, (request.params as { intent?: string }).intent).botDeployments.map((deployment) => deployment.botId);
      } catch {
        return; // the route answers the malformed body with its own 400
      }
      for (const agentId of new Set(agentIds)) {
        const record = await resources.record(agentId);
        const level = record === undefined ? undefined : caller.levelOf(record);
        if (record !== undefined && level === undefined) {
          throw forbidden(`The trigger references agent ${agentId}, which ${caller.principal.name} cannot use (USE access needed).`);
        }
      }
    }
  });
}

/** A non-admin may only start (or continue) conversations as themselves while enforcement is on. */
function checkStartAs(caller: CallerAccess, userId: string | undefined): void {
  if (!caller.restricted || userId === undefined || userId === '' || userId === caller.principal.name) return;
  throw forbidden(`${caller.principal.name} may only converse as themselves, not as '${userId}'.`);
}

function startContextUserId(body: unknown): string | undefined {
  try {
    const value = parseStartBody(body).context['userId'];
    return value?.type === 'string' && typeof value.value === 'string' && value.value !== '' ? value.value : undefined;
  } catch {
    return undefined; // the route reports the malformed body
  }
}

// Not encapsulated: the hooks and the decoration belong to the root instance (fastify-plugin semantics).
(authPlugin as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
export { authPlugin };

/** The descriptor view of the caller while enforcement is on (adds `callerLevel`, filters listings). */
export function descriptorAccessOf(request: FastifyRequest): CallerAccess | undefined {
  return request.caller?.options.enforcement ? request.caller : undefined;
}

/**
 * Owner and space of a resource the caller creates (recorded whenever authentication is on); the optional
 * `space` query parameter picks one of the caller's spaces.
 */
export function resourceOriginOf(request: FastifyRequest): DescriptorOrigin {
  if (request.caller === undefined) return {};
  const { space } = (request.query ?? {}) as { space?: unknown };
  return request.caller.origin(typeof space === 'string' ? space : undefined);
}

/**
 * The caller's identity for `${caller:…}` placeholders of HTTP calls (undefined while authentication is off): it
 * may go to the origin this request came to, `svc.public-url` and `svc.caller-identity.allowed-origins`.
 */
export function callerIdentityOf(request: FastifyRequest, settings: Settings): CallerIdentity | undefined {
  const caller = request.caller;
  if (caller === undefined) return undefined;
  const allowedOrigins = [`${request.protocol}://${request.host}`, ...settings['svc.caller-identity.allowed-origins'].split(',')];
  const publicUrl = settings['svc.public-url'];
  if (publicUrl) allowedOrigins.push(publicUrl);
  return { principal: caller.principal.name, token: caller.principal.token, allowedOrigins: allowedOrigins.map((o) => o.trim()).filter(Boolean) };
}
