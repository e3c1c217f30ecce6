import { Type, type Static } from '@sinclair/typebox';
import { AppError, invalid, notFound } from '../errors.ts';
import type { SecretMetadata } from '../storage/secret-ports.ts';
import { VAULT_DISABLED_MESSAGE, type Vault } from '../security/vault.ts';
import { DEFAULT_TENANT, SECRET_NAME_PATTERN, vaultReference } from '../security/vault-names.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * The secrets vault API (`/secretstore/secrets/default/...`). Values are write-only: every answer is metadata.
 * Without a master key every route answers 503. Request bodies carry secret values, so this plugin parses JSON
 * itself (a parse error never quotes the body) and no error message here ever includes a value.
 */

const MAX_VALUE_CHARS = 100_000;

const TenantParams = Type.Object({
  tenantId: Type.String({ description: `the tenant; this service has the one tenant '${DEFAULT_TENANT}'` }),
});
const SecretParams = Type.Object({
  tenantId: TenantParams.properties.tenantId,
  name: Type.String({
    pattern: SECRET_NAME_PATTERN,
    description: "letters, digits, '.', '_', '-'; 1 to 200 characters",
  }),
});

const PutBody = Type.Object(
  {
    value: Type.String({
      minLength: 1,
      maxLength: MAX_VALUE_CHARS,
      description: 'the secret value; stored encrypted, never returned',
    }),
    description: Type.Optional(
      Type.String({ maxLength: 1000, description: 'free text; when omitted, a replaced secret keeps its description' }),
    ),
  },
  { additionalProperties: false },
);

const Metadata = Type.Object(
  {
    name: Type.String(),
    reference: Type.String({ description: 'how configuration refers to the secret: ${vault:NAME}' }),
    description: Type.String(),
    createdAt: Type.String({ format: 'date-time', description: 'ISO-8601' }),
    lastModifiedAt: Type.String({ format: 'date-time', description: 'ISO-8601' }),
  },
  { description: 'what can be read about a secret: everything but its value' },
);

function toMetadata(secret: SecretMetadata): Static<typeof Metadata> {
  return {
    name: secret.name,
    reference: vaultReference(secret.name, secret.tenant),
    description: secret.description,
    createdAt: new Date(secret.createdAt).toISOString(),
    lastModifiedAt: new Date(secret.lastModifiedAt).toISOString(),
  };
}

function checkTenant(tenantId: string): void {
  if (tenantId !== DEFAULT_TENANT)
    throw notFound(`No tenant '${tenantId}'; this service has the one tenant '${DEFAULT_TENANT}'.`);
}

export async function secretRoutes(app: TypedApp, deps: { vault: Vault }): Promise<void> {
  const { vault } = deps;
  const tags = ['secrets'];

  // Before parsing and validation: a disabled vault answers 503 whatever the request.
  app.addHook('onRequest', async () => {
    if (!vault.enabled) throw new AppError('unavailable', VAULT_DISABLED_MESSAGE);
  });
  // The default JSON parser's errors quote the body, which here holds a secret.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string));
    } catch {
      done(
        invalid('The request body is not valid JSON; expected {"value": "...", "description": "..."}.', { path: '$' }),
        undefined,
      );
    }
  });

  app.put(
    '/secretstore/secrets/:tenantId/:name',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Create or replace a secret (write-only: the answer is its metadata)',
        params: SecretParams,
        body: PutBody,
        response: { 200: Metadata },
      },
    },
    async (request) => {
      const { tenantId, name } = request.params;
      checkTenant(tenantId);
      const { value, description } = request.body;
      const { metadata } = await vault.put({ name, value, description });
      return toMetadata(metadata);
    },
  );

  app.get(
    '/secretstore/secrets/:tenantId',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Metadata of every secret, by name',
        params: TenantParams,
        response: { 200: Type.Array(Metadata) },
      },
    },
    async (request) => {
      const { tenantId } = request.params;
      checkTenant(tenantId);
      return (await vault.list()).map(toMetadata);
    },
  );

  app.get(
    '/secretstore/secrets/:tenantId/:name',
    {
      config: { access: { roles: 'admin' } },
      schema: {
        tags,
        summary: 'Metadata of one secret (never its value)',
        params: SecretParams,
        response: { 200: Metadata },
      },
    },
    async (request) => {
      const { tenantId, name } = request.params;
      checkTenant(tenantId);
      const metadata = await vault.describe(name);
      if (metadata === undefined) throw notFound(`No secret '${name}'.`);
      return toMetadata(metadata);
    },
  );

  app.delete(
    '/secretstore/secrets/:tenantId/:name',
    {
      config: { access: { roles: 'admin' } },
      schema: { tags, summary: 'Delete a secret', params: SecretParams },
    },
    async (request, reply) => {
      const { tenantId, name } = request.params;
      checkTenant(tenantId);
      if (!(await vault.remove(name))) throw notFound(`No secret '${name}'.`);
      return reply.code(200).send();
    },
  );
}
