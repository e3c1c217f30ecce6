import { Type } from '@sinclair/typebox';
import { invalid } from '../errors.ts';
import { resourceKinds, type ResourceKindDefinition } from '../resources/kinds.ts';
import type { ResourceService } from '../resources/service.ts';
import { compileBodyValidator, compileParameterValidator } from '../resources/validation.ts';
import { resourceOriginOf, SpaceQuery } from './auth.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * REST surface of every versioned configuration store and of the descriptor store. Upstream 6.x store paths
 * reach these routes through the path rewrite in `legacy-paths.ts`.
 */

const IdParams = Type.Object({ id: Type.String({ description: 'resource id (24 lower-case hex characters)' }) });
const VersionQuery = Type.Object(
  {
    version: Type.Integer({
      minimum: 1,
      description: 'version to read or to update (must be the current one for updates)',
    }),
  },
  { additionalProperties: true },
);
const DeleteQuery = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'current version (required unless permanent=true)' }),
    ),
    permanent: Type.Boolean({ default: false, description: 'remove every version and the descriptor' }),
  },
  { additionalProperties: true },
);
const DescriptorListQuery = Type.Object(
  {
    filter: Type.String({
      default: '',
      maxLength: 256,
      description: 'text found case-insensitively in name, description or id (no pattern syntax)',
    }),
    index: Type.Integer({ default: 0, minimum: 0, description: 'page number (skip = index * limit)' }),
    limit: Type.Integer({ default: 20, description: 'page size; < 1 means all (at most 10000)' }),
  },
  { additionalProperties: true },
);
const AgentDescriptorListQuery = Type.Composite(
  [
    DescriptorListQuery,
    Type.Object({ space: Type.Optional(Type.String({ description: 'narrow the list to one workspace' })) }),
  ],
  { additionalProperties: true },
);

export const DescriptorSchema = Type.Object(
  {
    resource: Type.String({ description: 'svc:// reference of the current version' }),
    name: Type.String(),
    description: Type.String(),
    createdOn: Type.Integer({ description: 'epoch milliseconds' }),
    lastModifiedOn: Type.Integer({ description: 'epoch milliseconds' }),
    deleted: Type.Boolean(),
    originId: Type.Optional(Type.String({ description: 'id the resource had on the system it was exported from' })),
    ownerId: Type.Optional(Type.String()),
    spaceId: Type.Optional(Type.String()),
    visibility: Type.Optional(Type.String()),
    grants: Type.Optional(
      Type.Array(Type.Object({ principal: Type.String(), level: Type.String() }), {
        description: 'shown to callers at the owner level only',
      }),
    ),
    callerLevel: Type.Optional(
      Type.String({ description: "USE, EDIT or OWN: the calling user's level; absent while enforcement is off" }),
    ),
  },
  { title: 'Descriptor' },
);

const DescriptorEdit = Type.Object(
  {
    operation: Type.Literal('SET'),
    document: Type.Object(
      {
        name: Type.Optional(Type.String({ maxLength: 500 })),
        description: Type.Optional(Type.String({ maxLength: 5000 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'DescriptorEdit' },
);

const ResourceKindSchema = Type.Object(
  {
    name: Type.String({ description: 'internal name of the kind' }),
    title: Type.String({ description: 'human name of one resource' }),
    label: Type.String({ description: 'human name of the list' }),
    slug: Type.String({ description: "the manager's route segment" }),
    uriType: Type.String({ description: 'type host of references: svc://ai.svc.<uriType>/...' }),
    storePath: Type.String({ description: 'store path of the REST API' }),
    template: Type.Unknown({ description: 'a minimal valid body for a new resource' }),
  },
  { title: 'ResourceKind' },
);

const LocationHeader = { Location: { type: 'string', description: 'svc:// reference of the written version' } };
const created = {
  description: 'Created; `Location` holds the svc:// reference',
  headers: LocationHeader,
  type: 'null',
};
const passThroughSerializer = () => (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data));

export async function storeRoutes(app: TypedApp, deps: { resources: ResourceService }): Promise<void> {
  const { resources } = deps;
  // Configuration bodies are JSON only (anything else is 415); the resource service validates them, after it
  // translated upstream aliases, so Fastify checks only parameters here.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? () => true : compileParameterValidator(schema),
  );

  for (const kind of resources.catalogue.all) registerKind(app, resources, kind);

  app.get(
    '/resourcekinds',
    {
      config: { access: { roles: 'authenticated' } },
      schema: {
        tags: ['descriptors'],
        summary: 'The configuration kinds: names, store paths, reference types and what the manager shows',
        response: { 200: Type.Array(ResourceKindSchema) },
      },
    },
    async () => resourceKinds,
  );

  app.get(
    '/descriptorstore/descriptors/:id',
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags: ['descriptors'],
        summary: 'Read the descriptor of any configuration resource',
        params: IdParams,
        response: { 200: DescriptorSchema },
      },
    },
    async (request) => resources.descriptor(request.params.id, request.caller),
  );

  app.patch(
    '/descriptorstore/descriptors/:id',
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags: ['descriptors'],
        summary: 'Set the name and/or description of a configuration resource',
        params: IdParams,
        querystring: Type.Object(
          { version: Type.Optional(Type.Integer({ minimum: 1 })) },
          { additionalProperties: true },
        ),
        body: DescriptorEdit,
        response: { 200: DescriptorSchema },
      },
      validatorCompiler: ({ schema }) => compileParameterValidator(schema),
    },
    async (request) => {
      const { id } = request.params;
      const { version } = request.query;
      const { document } = request.body;
      return resources.editDescriptor(id, document, version, request.caller);
    },
  );
}

function registerKind(app: TypedApp, resources: ResourceService, kind: ResourceKindDefinition): void {
  const base = kind.storePath;
  const tags = [kind.storePath.split('/')[1]!];
  const bodySchema = kind.schema;

  app.get(
    `${base}/jsonSchema`,
    {
      config: { access: { roles: 'read' } },
      schema: { tags, summary: `JSON schema of a ${kind.title}` },
    },
    async () => bodySchema,
  );

  app.get(
    `${base}/descriptors`,
    {
      config: { access: { roles: 'read', rule: 'lists only what the caller can see' } },
      schema: {
        tags,
        summary: `List ${kind.title} descriptors, newest change first`,
        querystring: kind.name === 'agent' ? AgentDescriptorListQuery : DescriptorListQuery,
        response: { 200: Type.Array(DescriptorSchema) },
      },
    },
    async (request) => resources.listDescriptors(kind.name, request.query, request.caller),
  );

  app.post(
    base,
    {
      config: { access: { roles: 'write' } },
      schema: {
        tags,
        summary: `Create a ${kind.title} (version 1)`,
        querystring: SpaceQuery,
        body: bodySchema,
        response: { 201: created },
      },
    },
    async (request, reply) => {
      const { uri } = await resources.create(
        kind.name,
        request.body,
        resourceOriginOf(request, request.query.space),
        request.caller,
      );
      request.log.info({ resource: uri }, `created ${kind.title}`);
      return reply.code(201).header('Location', uri).send();
    },
  );

  app.get(
    `${base}/:id`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: `Read one version of a ${kind.title}`,
        params: IdParams,
        querystring: VersionQuery,
        response: { 200: bodySchema },
      },
      serializerCompiler: passThroughSerializer,
    },
    async (request, reply) => {
      const { id } = request.params;
      const { version } = request.query;
      return reply
        .type('application/json; charset=utf-8')
        .send(await resources.read(kind.name, id, version, request.caller));
    },
  );

  app.put(
    `${base}/:id`,
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags,
        summary: `Update a ${kind.title}: creates version n+1 from the current version n`,
        params: IdParams,
        querystring: VersionQuery,
        body: bodySchema,
        response: {
          200: {
            description: '`Location` holds the reference of the new version',
            headers: LocationHeader,
            type: 'null',
          },
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { version } = request.query;
      const { uri } = await resources.update(kind.name, id, version, request.body, request.caller);
      return reply.header('Location', uri).send();
    },
  );

  if (kind.patchLists !== undefined) {
    const lists = Object.keys(kind.patchLists).join(', ');
    app.patch(
      `${base}/:id`,
      {
        config: { access: { roles: 'write', level: 'EDIT' } },
        schema: {
          tags,
          summary: `Partly update a ${kind.title} (as upstream 6.x): creates version n+1 from the current version n`,
          description: `Each instruction's document lists entries of ${lists}: SET replaces the entries with the same identity or adds them, DELETE removes them.`,
          params: IdParams,
          querystring: VersionQuery,
          body: Type.Array(
            Type.Object(
              {
                operation: Type.Union([Type.Literal('SET'), Type.Literal('DELETE')]),
                document: Type.Object({}, { description: `a partial ${kind.title}: only ${lists}` }),
              },
              { additionalProperties: false },
            ),
            { minItems: 1 },
          ),
          response: {
            200: {
              description: '`Location` holds the reference of the new version',
              headers: LocationHeader,
              type: 'null',
            },
          },
        },
        // The instructions are checked here; each document is checked by the resource service, like any body.
        validatorCompiler: ({ schema, httpPart }) =>
          httpPart === 'body' ? compileBodyValidator(schema) : compileParameterValidator(schema),
      },
      async (request, reply) => {
        const { id } = request.params;
        const { version } = request.query;
        const { uri } = await resources.patch(kind.name, id, version, request.body, request.caller);
        return reply.header('Location', uri).send();
      },
    );
  }

  app.delete(
    `${base}/:id`,
    {
      config: { access: { roles: 'write', level: 'OWN' } },
      schema: {
        tags,
        summary: `Delete a ${kind.title}`,
        params: IdParams,
        querystring: DeleteQuery,
        response: { 200: { type: 'null' } },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { version, permanent } = request.query;
      if (!permanent && version === undefined) {
        throw invalid('The query parameter version is required (the current version), unless permanent=true.', {
          path: 'version',
        });
      }
      await resources.delete(kind.name, id, version ?? 0, permanent, request.caller);
      return reply.send();
    },
  );

  app.post(
    `${base}/:id`,
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags,
        summary: `Duplicate one version of a ${kind.title} into a new resource`,
        params: IdParams,
        querystring: Type.Composite([VersionQuery, SpaceQuery], { additionalProperties: true }),
        response: { 201: created },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { version } = request.query;
      const { uri } = await resources.duplicate(
        kind.name,
        id,
        version,
        resourceOriginOf(request, request.query.space),
        request.caller,
      );
      return reply.code(201).header('Location', uri).send();
    },
  );

  app.get(
    `${base}/:id/currentversion`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: `Current version number of a ${kind.title}`,
        params: IdParams,
        response: { 200: { type: 'integer', description: 'text/plain' } },
      },
      serializerCompiler: passThroughSerializer,
    },
    async (request, reply) => {
      const { id } = request.params;
      return reply
        .type('text/plain; charset=utf-8')
        .send(String(await resources.currentVersion(kind.name, id, request.caller)));
    },
  );

  app.post(
    `${base}/:id/currentversion`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: `Redirect (303) to the current version of a ${kind.title}`,
        params: IdParams,
        response: { 303: { type: 'null', headers: { Location: { type: 'string' } } } },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const version = await resources.currentVersion(kind.name, id, request.caller);
      return reply.code(303).header('Location', `${base}/${id}?version=${version}`).send();
    },
  );
}
