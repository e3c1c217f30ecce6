import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { AppError } from '../errors.ts';
import { CallerAccess } from '../security/access.ts';
import { hasRoleOf, openApiAccess, rolesOf, type RouteAccess } from '../security/route-access.ts';
import {
  AuthenticationError,
  bearerToken,
  createAuthenticator,
  type Authenticator,
  type Principal,
} from '../security/auth.ts';
import type { CallerIdentity } from '../security/auth-caller.ts';
import { isApiKeyShaped, type ApiKeyService } from '../security/api-keys.ts';
import type { ApiKeyRecord } from '../storage/openai-ports.ts';
import type { Settings } from '../settings.ts';
import type { DescriptorOrigin } from '../storage/ports.ts';
import { problem, sendProblem } from './problems.ts';

/**
 * Authentication and role checks for the whole application (SPEC "Authentication", DESIGN §4.18).
 *
 * - Every route declares who may call it in its options: `config: { access: { roles: 'write', level: 'EDIT' } }`
 *   (`src/security/route-access.ts`). A route registered without one stops start-up, naming its method and URL.
 *   Routes of third-party plugins get theirs where the plugin is registered (`registerWithAccess`). The
 *   declaration also goes into the route's OpenAPI operation (`x-roles`, `x-access`, `x-access-level`,
 *   `security: bearer`) and into `app.declaredAccess` (the README's table is generated from it).
 * - `onRequest` (only with `svc.oidc.tenant-enabled`): public routes pass; every other request, an unknown path
 *   included, needs a valid bearer token (else a bare 401 problem with `WWW-Authenticate: Bearer`, no redirect)
 *   and one of the roles of its class (else 403 naming them). The caller is then `request.caller`.
 *
 * Access levels on resources and the other ownership rules ("the caller's own conversation") are the services'
 * business: routes hand `request.caller` to them. No token reaches a log: pino redacts the header.
 */

/** A route as registered, with its declared access. */
export interface DeclaredRoute {
  readonly method: string;
  readonly url: string;
  readonly access: RouteAccess;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller (undefined while authentication is off, and on public routes). */
    caller?: CallerAccess | undefined;
    /** What `${caller:…}` placeholders of HTTP calls may send for this request (see `callerIdentityOf`). */
    callerIdentity?: CallerIdentity | undefined;
    /** The API key the request came with, on routes that take one (`access.apiKeys`). */
    apiKey?: ApiKeyRecord | undefined;
  }
  interface FastifyContextConfig {
    /** Who may call the route (required: a route without it stops start-up). */
    access?: RouteAccess;
  }
  interface FastifyInstance {
    /** Every route registered so far with its access, in registration order (HEAD left out: it is a GET). */
    readonly declaredAccess: readonly DeclaredRoute[];
    /** The access of the routes of a third-party plugin registered through `registerWithAccess`. */
    readonly pluginRouteAccess?: RouteAccess;
  }
}

export interface AuthPluginOptions {
  readonly settings: Settings;
  /** Replaces the OIDC verifier (tests of this plugin alone). */
  readonly authenticator?: Authenticator;
  /**
   * API keys, taken as the bearer token on routes that declare `access.apiKeys`; such a key is checked whether or
   * not OIDC is on (a route then serves only what the key allows).
   */
  readonly apiKeys?: ApiKeyService | undefined;
}

/** Whether authentication is on and the settings it needs are there; throws naming a missing one. */
function authenticatorOf(options: AuthPluginOptions): Authenticator | undefined {
  const { settings } = options;
  if (!settings['svc.oidc.tenant-enabled']) return undefined;
  if (options.authenticator) return options.authenticator;
  const issuer = settings['svc.oidc.auth-server-url'];
  const audience = settings['svc.oidc.client-id'];
  if (!issuer || !audience) {
    throw new Error(
      'svc.oidc.tenant-enabled is on, so svc.oidc.auth-server-url (the issuer) and svc.oidc.client-id (the audience) must be set.',
    );
  }
  return createAuthenticator({ issuer, audience, clockToleranceSeconds: settings['svc.oidc.clock-tolerance-seconds'] });
}

const unauthorized = (reply: FastifyReply, detail: string) =>
  sendProblem(reply, problem(401, detail), { 'WWW-Authenticate': 'Bearer' });

function forbiddenByRole(access: RouteAccess, principal: Principal): AppError {
  const roles = rolesOf(access.roles);
  return new AppError(
    'forbidden',
    `This operation needs the role ${roles.join(' or ')}; ${principal.name} has ${principal.roles.size === 0 ? 'no role of this service' : [...principal.roles].join(', ')}.`,
    { neededRoles: [...roles] },
  );
}

async function authentication(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const { settings } = options;
  const authenticator = authenticatorOf(options);
  const accessOptions = {
    enforcement:
      authenticator !== undefined && (settings['svc.authorization.enabled'] || settings['svc.workspaces.enabled']),
    workspacesEnabled: settings['svc.workspaces.enabled'],
  };
  if (!authenticator && (settings['svc.authorization.enabled'] || settings['svc.workspaces.enabled'])) {
    app.log.warn(
      'svc.authorization.enabled / svc.workspaces.enabled need authentication (svc.oidc.tenant-enabled); nothing is enforced',
    );
  }

  app.decorateRequest('caller', undefined);
  app.decorateRequest('callerIdentity', undefined);
  app.decorateRequest('apiKey', undefined);
  const declared: DeclaredRoute[] = [];
  app.decorate('declaredAccess', declared);

  app.addHook('onRoute', function declareAccess(this: FastifyInstance, route: RouteOptions) {
    const methods = [route.method].flat();
    const access = route.config?.access ?? this.pluginRouteAccess;
    if (access === undefined) {
      throw new Error(
        `Route ${methods.join(', ')} ${route.url} declares no access: give it config: { access: { roles: ... } } (src/security/route-access.ts).`,
      );
    }
    route.config = { ...route.config, access };
    route.schema = { ...route.schema, ...openApiAccess(access) } as FastifySchema;
    const listed = methods.filter((method) => method !== 'HEAD');
    if (listed.length > 0) declared.push({ method: listed.join(', '), url: route.url ?? '/', access });
  });

  const { apiKeys } = options;
  if (!authenticator && !apiKeys) return;

  app.addHook('onRequest', async (request, reply) => {
    // An unknown path (no route, no declaration) still needs a token: nobody learns what exists without one.
    const access = request.routeOptions.config.access;
    if (access?.roles === 'public') return;
    const token = bearerToken(request.headers.authorization);
    if (access?.apiKeys && apiKeys && token !== undefined && isApiKeyShaped(token)) {
      try {
        request.apiKey = await apiKeys.authenticate(token);
      } catch (error) {
        return unauthorized(reply, error instanceof Error ? error.message : 'The API key was refused.');
      }
      return;
    }
    if (!authenticator) return;
    if (token === undefined)
      return unauthorized(reply, 'Authentication is required: send Authorization: Bearer <access token>.');
    let principal: Principal;
    try {
      principal = await authenticator.authenticate(token);
    } catch (error) {
      const detail = error instanceof AuthenticationError ? error.message : 'The token could not be verified.';
      return unauthorized(reply, `The bearer token was refused: ${detail}`);
    }
    request.caller = new CallerAccess(principal, accessOptions);
    request.callerIdentity = callerIdentityOf(request, settings);
    if (access !== undefined && !hasRoleOf(access.roles, principal.roles)) throw forbiddenByRole(access, principal);
  });
}

/** Registered on the root instance (its hooks and decorations apply to every route registered after it). */
export const authPlugin = fastifyPlugin(authentication, { name: 'svc-authentication', fastify: '5.x' });

/**
 * Registers a plugin whose routes cannot carry `config.access` (a third-party plugin such as swagger-ui): every
 * route registered inside `register` gets `access`. The declaration stays where the plugin is registered.
 */
export async function registerWithAccess(
  app: FastifyInstance,
  access: RouteAccess,
  register: (context: FastifyInstance) => PromiseLike<unknown>,
): Promise<void> {
  await app.register(async (context) => {
    context.decorate('pluginRouteAccess', access);
    await register(context);
  });
}

/** The query parameter of the routes that create resources: which of the caller's spaces gets the new resource. */
export const SpaceQuery = Type.Object(
  {
    space: Type.Optional(
      Type.String({
        description:
          "one of the caller's spaces for the new resource (workspaces); default: the caller's default space",
      }),
    ),
  },
  { additionalProperties: true },
);

/** Owner and space of a resource the caller creates (recorded whenever authentication is on). */
export function resourceOriginOf(request: FastifyRequest, space: string | undefined): DescriptorOrigin {
  if (request.caller === undefined) return {};
  return request.caller.origin(space);
}

/**
 * The caller's identity for `${caller:…}` placeholders of HTTP calls (undefined while authentication is off): it
 * may go to the origin this request came to, `svc.public-url` and `svc.caller-identity.allowed-origins`.
 */
export function callerIdentityOf(request: FastifyRequest, settings: Settings): CallerIdentity | undefined {
  const caller = request.caller;
  if (caller === undefined) return undefined;
  const allowedOrigins = [
    `${request.protocol}://${request.host}`,
    ...settings['svc.caller-identity.allowed-origins'].split(','),
  ];
  const publicUrl = settings['svc.public-url'];
  if (publicUrl) allowedOrigins.push(publicUrl);
  return {
    principal: caller.principal.name,
    token: caller.principal.token,
    allowedOrigins: allowedOrigins.map((o) => o.trim()).filter(Boolean),
  };
}
