import { Type, type Static } from '@sinclair/typebox';
import type { FastifyError } from 'fastify';
import { invalid } from '../errors.ts';
import type { BackupService } from '../backup/service.ts';
import { STRATEGIES, type ImportOptions } from '../backup/import-plan.ts';
import { ZipTooLargeError } from '../backup/zip-reader.ts';
import { problem, sendProblem } from './problems.ts';
import { resourceOriginOf, SpaceQuery } from './auth.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Export and import of agents as ZIP archives. ZIP bodies (`application/zip`, also `application/x-zip-compressed`
 * and `application/octet-stream`) are parsed into a Buffer here only, up to `svc.backup.max-zip-bytes` (413 beyond).
 */

const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

const AgentIdParams = Type.Object({ agentId: Type.String({ description: 'agent id' }) });
const ExportQuery = Type.Object(
  {
    agentVersion: Type.Optional(
      Type.Integer({ minimum: 1, description: 'agent version (default: the current version)' }),
    ),
  },
  { additionalProperties: true },
);
const FileParams = Type.Object({ file: Type.String({ description: 'download name <agentId>-<version>.zip' }) });
const strategy = (options: { default?: string; description: string }) =>
  Type.Unsafe<(typeof STRATEGIES)[number]>({ type: 'string', enum: [...STRATEGIES], ...options });
const ImportQuery = Type.Object(
  {
    strategy: strategy({
      default: 'create',
      description: 'create (new ids), merge (match by origin id), upgrade (match by position)',
    }),
    selectedResources: Type.Optional(
      Type.String({
        description: 'comma-separated origin ids of the matched resources that may be updated (merge, upgrade)',
      }),
    ),
    targetAgentId: Type.Optional(
      Type.String({ description: 'agent to merge into or to upgrade (default: by origin id, or by name for upgrade)' }),
    ),
  },
  { additionalProperties: true },
);

const PreviewQuery = Type.Object(
  {
    ...ImportQuery.properties,
    strategy: Type.Optional(
      strategy({
        description:
          'as for the import; without it, what the import would do to existing resources: merge (match by origin id) for admins, create for others (the only strategy they may import with)',
      }),
    ),
  },
  { additionalProperties: true },
);

const ResourceView = Type.Object({
  originId: Type.String(),
  kind: Type.String(),
  name: Type.String(),
  action: Type.String({ enum: ['CREATE', 'UPDATE', 'SKIP'] }),
  targetId: Type.Optional(Type.String()),
  targetVersion: Type.Optional(Type.Integer()),
  renamed: Type.Optional(
    Type.Literal(true, {
      description: "merge sets the matched resource's name and description to the archive's",
    }),
  ),
});
const PreviewBody = Type.Object({
  strategy: Type.String(),
  agent: ResourceView,
  resources: Type.Array(ResourceView),
  ignoredEntries: Type.Array(Type.String()),
});
const ImportBody = Type.Composite([
  Type.Object({ agentId: Type.String(), agentVersion: Type.Integer(), location: Type.String() }),
  PreviewBody,
]);

/** The import options of a query; the strategy as given (the import's query has a default, the preview's not). */
function importOptions<Q extends Static<typeof PreviewQuery>>(
  query: Q,
): Omit<ImportOptions, 'strategy'> & { strategy: Q['strategy'] } {
  const selected = query.selectedResources
    ?.split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  return {
    strategy: query.strategy,
    selectedResources: selected === undefined ? undefined : new Set(selected),
    targetAgentId: query.targetAgentId === undefined || query.targetAgentId === '' ? undefined : query.targetAgentId,
  };
}

function zipBody(body: unknown): Uint8Array {
  if (!(body instanceof Uint8Array))
    throw invalid('Send the ZIP archive as the request body with Content-Type: application/zip.', { path: 'body' });
  return body;
}

export async function backupRoutes(app: TypedApp, deps: { backup: BackupService; maxZipBytes: number }): Promise<void> {
  const { backup, maxZipBytes } = deps;
  // Only ZIP bodies here: any other content type is answered with 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(ZIP_TYPES, { parseAs: 'buffer', bodyLimit: maxZipBytes }, (_request, body, done) =>
    done(null, body),
  );
  // Size problems of this plugin name their own setting; everything else goes to the application's handler.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendProblem(
        reply,
        problem(413, `The ZIP is larger than the service accepts (${maxZipBytes} bytes, svc.backup.max-zip-bytes).`),
      );
    }
    if (error instanceof ZipTooLargeError) return sendProblem(reply, problem(413, error.message));
    throw error;
  });

  app.post(
    '/backup/export/:agentId',
    {
      config: { access: { roles: 'write', level: 'USE' } },
      schema: {
        tags: ['backup'],
        summary: 'Export an agent version as a ZIP; Location names the download',
        params: AgentIdParams,
        querystring: ExportQuery,
        response: {
          200: { description: 'Exported; `Location` is /backup/export/<agentId>-<version>.zip', type: 'null' },
        },
      },
    },
    async (request, reply) => {
      const { agentId } = request.params;
      const { agentVersion } = request.query;
      const fileName = await backup.exportAgent(agentId, agentVersion, request.caller);
      return reply.code(200).header('Location', `/backup/export/${fileName}`).send();
    },
  );

  app.get(
    '/backup/export/:file',
    {
      config: { access: { roles: 'write', level: 'USE', rule: 'on the exported agent' } },
      schema: { tags: ['backup'], summary: 'Download an export ZIP', params: FileParams },
    },
    async (request, reply) => {
      const { file } = request.params;
      const zip = await backup.download(file, request.caller);
      return reply
        .type('application/zip')
        .header('Content-Disposition', `attachment; filename="${file}"`)
        .send(Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength));
    },
  );

  app.post(
    '/backup/import',
    {
      config: { access: { roles: 'write', rule: 'strategy create only (merge, upgrade: admins)' } },
      bodyLimit: maxZipBytes,
      schema: {
        tags: ['backup'],
        summary: 'Import an agent ZIP (create, merge or upgrade); Location is the agent version written',
        querystring: Type.Composite([ImportQuery, SpaceQuery], { additionalProperties: true }),
        response: { 201: ImportBody },
      },
    },
    async (request, reply) => {
      const result = await backup.import(
        zipBody(request.body),
        importOptions(request.query),
        resourceOriginOf(request, request.query.space),
        request.caller,
      );
      return reply.code(201).header('Location', result.location).send(result);
    },
  );

  app.post(
    '/backup/import/preview',
    {
      config: { access: { roles: 'write', rule: 'strategy create only (merge, upgrade: admins)' } },
      bodyLimit: maxZipBytes,
      schema: {
        tags: ['backup'],
        summary: 'Dry run of an import: what would be created, updated or skipped; writes nothing',
        querystring: PreviewQuery,
        response: { 200: PreviewBody },
      },
    },
    async (request) => backup.preview(zipBody(request.body), importOptions(request.query), request.caller),
  );
}
