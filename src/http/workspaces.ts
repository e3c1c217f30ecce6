import { Type } from '@sinclair/typebox';
import type { ResourceService } from '../resources/service.ts';
import { compileParameterValidator } from '../resources/validation.ts';
import { LEVELS, parseGrants, VISIBILITIES } from '../security/access.ts';
import { workspaceCapabilities } from '../security/workspaces.ts';
import type { Settings } from '../settings.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Workspaces and sharing (DESIGN §4.12):
 * - `GET /workspaces`: the caller's capability record;
 * - `GET|PUT /descriptorstore/descriptors/:id/grants`: the grant list `[{principal, level}]` of a resource
 *   (owner level; PUT replaces the list);
 * - `PUT /descriptorstore/descriptors/:id/visibility`: `{visibility, spaceId?}` (owner level).
 * The resource service checks the caller's level (owner level for grants and visibility).
 */

const IdParams = Type.Object({ id: Type.String({ description: 'resource id (24 lower-case hex characters)' }) });

const SpaceSchema = Type.Object({
  id: Type.String({ description: 'user:<principal> (personal) or group:<name>' }),
  name: Type.String(),
  type: Type.Union([Type.Literal('personal'), Type.Literal('group')]),
});

const CapabilitiesSchema = Type.Object(
  {
    enforcementActive: Type.Boolean({ description: 'access levels are enforced for this caller' }),
    principal: Type.Union([Type.String(), Type.Null()], {
      description: 'the value stamped as owner; null without authentication',
    }),
    defaultWriteSpace: Type.Union([Type.String(), Type.Null()], { description: 'where new resources go' }),
    spaces: Type.Array(SpaceSchema, { description: 'the spaces the caller can reach' }),
    seesEverything: Type.Boolean({ description: 'admin, or enforcement off' }),
  },
  { title: 'WorkspaceCapabilities' },
);

export const GrantSchema = Type.Object(
  {
    principal: Type.String({ minLength: 1, maxLength: 200 }),
    level: Type.Union(LEVELS.map((level) => Type.Literal(level))),
  },
  { additionalProperties: false, title: 'Grant' },
);

/** A grant as stored: its level as written (one this service does not know grants nothing). */
export const StoredGrantSchema = Type.Object(
  { principal: Type.String(), level: Type.String({ description: 'USE, EDIT or OWN' }) },
  { title: 'StoredGrant' },
);

export const VisibilityBody = Type.Object(
  {
    visibility: Type.Union(
      VISIBILITIES.map((visibility) => Type.Literal(visibility)),
      {
        description:
          'private: owner and grantees; space: also every member of its space (workspaces); public: every signed-in user may use it',
      },
    ),
    spaceId: Type.Optional(Type.String({ description: "move it to one of the caller's spaces" })),
  },
  { additionalProperties: false, title: 'Visibility' },
);

const AccessView = Type.Object({
  ownerId: Type.Optional(Type.String()),
  spaceId: Type.Optional(Type.String()),
  visibility: Type.String(),
  grants: Type.Array(StoredGrantSchema),
});

export async function workspaceRoutes(
  app: TypedApp,
  deps: { resources: ResourceService; settings: Settings },
): Promise<void> {
  const { resources, settings } = deps;
  const tags = ['workspaces'];

  app.get(
    '/workspaces',
    {
      config: { access: { roles: 'authenticated' } },
      schema: { tags, summary: 'The workspace capability record of the caller', response: { 200: CapabilitiesSchema } },
    },
    async (request) => {
      const caller = request.caller;
      return workspaceCapabilities(caller?.principal, {
        enforcement: caller?.options.enforcement ?? false,
        workspacesEnabled: settings['svc.workspaces.enabled'],
        isAdmin: caller?.isAdmin ?? false,
      });
    },
  );

  app.get(
    '/descriptorstore/descriptors/:id/grants',
    {
      config: { access: { roles: 'read', level: 'OWN' } },
      schema: {
        tags,
        summary: 'Who else may use, edit or own a resource (owner level)',
        params: IdParams,
        response: { 200: Type.Array(StoredGrantSchema) },
      },
    },
    async (request) => {
      return resources.grants(request.params.id, request.caller);
    },
  );

  app.put(
    '/descriptorstore/descriptors/:id/grants',
    {
      config: { access: { roles: 'write', level: 'OWN' } },
      schema: {
        tags,
        summary: 'Replace the grant list of a resource (owner level); answers the list stored',
        description: 'A principal named twice keeps its highest level; a grant to the owner is dropped.',
        params: IdParams,
        body: Type.Array(GrantSchema, { maxItems: 1000 }),
        response: { 200: Type.Array(StoredGrantSchema) },
      },
      validatorCompiler: ({ schema, httpPart }) =>
        httpPart === 'body' ? () => true : compileParameterValidator(schema),
    },
    async (request) => {
      return resources.setGrants(request.params.id, request.body ?? null, request.caller);
    },
  );

  app.put(
    '/descriptorstore/descriptors/:id/visibility',
    {
      config: { access: { roles: 'write', level: 'OWN' } },
      schema: {
        tags,
        summary: 'Set who besides the grantees may use a resource, and its space (owner level)',
        params: IdParams,
        body: VisibilityBody,
        response: { 200: AccessView },
      },
    },
    async (request) => {
      const stored = await resources.setVisibility(request.params.id, request.body, request.caller);
      return {
        ...(stored.ownerId === undefined ? {} : { ownerId: stored.ownerId }),
        ...(stored.spaceId === undefined ? {} : { spaceId: stored.spaceId }),
        visibility: stored.visibility ?? 'private',
        grants: parseGrants(stored.grants),
      };
    },
  );
}
