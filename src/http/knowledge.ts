import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { invalid } from '../errors.ts';
import { compileBodyValidator, describeSchemaError } from '../resources/validation.ts';
import { CONTENT_TYPE_OF, DOCUMENT_FORMATS, formatOf, type DocumentFormat } from '../knowledge/documents.ts';
import type { IncomingDocument, KnowledgeService } from '../knowledge/service.ts';
import type { TypedApp } from './typed-app.ts';

/**
 * Documents of knowledge bases (`/ragstore/rags/<id>/...`; the store routes serve the configuration itself):
 * ingestion (text, Markdown, HTML and PDF; a raw body, JSON, or multipart files), its status, the documents, and a
 * search that shows what retrieval finds. Uploads are read part by part up to `svc.rag.max-document-bytes` per
 * document, `svc.rag.max-documents` per ingestion and `svc.rag.max-upload-bytes` for all of them (413 beyond).
 */

const BASE = '/ragstore/rags';
const RAW_TYPES = ['text/markdown', 'text/x-markdown', 'text/html', 'application/xhtml+xml', 'application/pdf'];

const IdParams = Type.Object({ id: Type.String({ description: 'knowledge base id' }) });
const IngestQuery = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'the version whose embedding and chunking apply (default: current)' }),
    ),
    documentName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: "name of a document sent as the raw body (default 'unnamed'); the same name replaces it",
      }),
    ),
    replace: Type.Optional(
      Type.Boolean({
        description: 'true (the only behaviour): ingesting a name again replaces that document and its chunks',
      }),
    ),
  },
  { additionalProperties: true },
);
const JsonDocuments = Type.Object(
  {
    documents: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 500, description: 'document name (its identity)' }),
          contentType: Type.Optional(
            Type.String({ description: `text/plain, text/markdown, text/html or application/pdf (else by name)` }),
          ),
          content: Type.Optional(Type.String({ description: 'the text (text, Markdown, HTML)' })),
          contentBase64: Type.Optional(Type.String({ description: 'the bytes, base64 (for PDF)' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false, title: 'IngestDocuments' },
);
const IngestionSchema = Type.Object(
  {
    ingestionId: Type.String(),
    kbId: Type.String({ description: 'the knowledge base id' }),
    status: Type.String({
      description: 'pending, processing, completed, completed_with_errors (some documents failed) or failed',
    }),
    createdOn: Type.Integer(),
    updatedOn: Type.Integer(),
    documents: Type.Array(
      Type.Object({
        name: Type.String(),
        status: Type.String({ description: 'pending, processing, completed or failed' }),
        chunks: Type.Optional(Type.Integer()),
        error: Type.Optional(Type.String({ description: 'why the document failed' })),
      }),
    ),
  },
  { title: 'Ingestion' },
);
const DocumentSchema = Type.Object(
  {
    id: Type.String({ description: 'derived from the name' }),
    name: Type.String(),
    contentType: Type.String(),
    sizeBytes: Type.Integer(),
    contentHash: Type.String({ description: 'SHA-256 of the extracted text' }),
    chunkCount: Type.Integer(),
    ingestionId: Type.String(),
    createdOn: Type.Integer(),
    updatedOn: Type.Integer(),
  },
  { title: 'KnowledgeDocument' },
);
const SearchBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4000 }),
    maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false, title: 'KnowledgeSearch' },
);
export const SearchHitSchema = Type.Object({
  documentId: Type.String(),
  documentName: Type.String(),
  chunkIndex: Type.Integer(),
  text: Type.String(),
  score: Type.Number({ description: 'relevance in [0, 1]' }),
});

function tooLarge(message: string): Error {
  return Object.assign(new Error(message), { statusCode: 413 });
}

export async function knowledgeRoutes(
  app: TypedApp,
  deps: { knowledge: KnowledgeService; maxDocumentBytes: number; maxDocuments: number; maxUploadBytes: number },
): Promise<void> {
  const { knowledge, maxDocumentBytes, maxDocuments, maxUploadBytes } = deps;
  const tags = ['ragstore'];
  const documentLimit = `svc.rag.max-document-bytes (${maxDocumentBytes} bytes)`;

  await app.register(multipart, {
    limits: { fileSize: maxDocumentBytes, files: maxDocuments, fields: 0, parts: maxDocuments },
  });
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(
    ['text/plain', ...RAW_TYPES, 'application/octet-stream'],
    { parseAs: 'buffer', bodyLimit: maxDocumentBytes },
    (_request, body, done) => done(null, body),
  );

  async function multipartDocuments(request: FastifyRequest): Promise<IncomingDocument[]> {
    const documents: IncomingDocument[] = [];
    let total = 0;
    try {
      for await (const part of request.parts()) {
        if (part.type !== 'file')
          throw invalid(`The form field '${part.fieldname}' is not read here: send each document as a file part.`);
        const name = part.filename || part.fieldname;
        const bytes = await part.toBuffer();
        total += bytes.byteLength;
        if (total > maxUploadBytes)
          throw tooLarge(
            `The documents of one ingestion are larger than svc.rag.max-upload-bytes (${maxUploadBytes} bytes).`,
          );
        documents.push({ ...identify(name, part.mimetype), bytes });
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(`A document is larger than ${documentLimit}.`);
      if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT')
        throw tooLarge(`An ingestion takes at most svc.rag.max-documents (${maxDocuments}) documents.`);
      throw error;
    }
    return documents;
  }

  function jsonDocuments(body: typeof JsonDocuments.static): IncomingDocument[] {
    if (body.documents.length > maxDocuments)
      throw tooLarge(`An ingestion takes at most svc.rag.max-documents (${maxDocuments}) documents.`);
    return body.documents.map((document, i) => {
      if ((document.content === undefined) === (document.contentBase64 === undefined))
        throw invalid(`$.documents[${i}] needs exactly one of 'content' and 'contentBase64'.`);
      const bytes =
        document.content === undefined
          ? Buffer.from(document.contentBase64!, 'base64')
          : Buffer.from(document.content, 'utf8');
      if (bytes.byteLength > maxDocumentBytes)
        throw tooLarge(`The document '${document.name}' is larger than ${documentLimit}.`);
      return { ...identify(document.name, document.contentType, `$.documents[${i}]`), bytes };
    });
  }

  app.post(
    `${BASE}/:id/ingest`,
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags,
        summary: 'Ingest documents into a knowledge base (asynchronous: 202 with the ingestion id)',
        description:
          'The body is one document (text/plain, text/markdown, text/html or application/pdf, named by documentName), `multipart/form-data` with one file part per document, or JSON `{documents:[{name, content | contentBase64, contentType?}]}`. A document with the name of one already in the knowledge base replaces it and its chunks.',
        params: IdParams,
        querystring: IngestQuery,
        response: { 202: IngestionSchema },
      },
      bodyLimit: maxDocumentBytes,
    },
    async (request, reply) => {
      const { id } = request.params;
      const { version, documentName, replace } = request.query;
      if (replace === false)
        throw invalid(
          'replace=false is not available: a document is identified by its name, and ingesting it again replaces it.',
        );
      const knowledgeBase = await knowledge.knowledgeBaseToChange(id, version, request.caller);
      let documents: IncomingDocument[];
      if (request.isMultipart()) documents = await multipartDocuments(request);
      else if (Buffer.isBuffer(request.body)) {
        const name = documentName ?? 'unnamed';
        documents = [{ ...identify(name, request.headers['content-type']), bytes: request.body }];
      } else documents = jsonDocuments(validJsonDocuments(request.body));
      const record = await knowledge.startIngestion(knowledgeBase, documents);
      return reply.code(202).send({ ingestionId: record.id, ...record });
    },
  );

  app.get(
    `${BASE}/:id/ingestion/:ingestionId/status`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: 'Progress of an ingestion, per document with the reason of each failure',
        params: Type.Object({ id: Type.String(), ingestionId: Type.String() }),
        response: { 200: IngestionSchema },
      },
    },
    async (request) => {
      const record = await knowledge.ingestion(request.params.id, request.params.ingestionId, request.caller);
      return { ingestionId: record.id, ...record };
    },
  );

  app.get(
    `${BASE}/:id/documents`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: 'The documents of a knowledge base',
        params: IdParams,
        response: { 200: Type.Array(DocumentSchema) },
      },
    },
    async (request) => knowledge.documents(request.params.id, request.caller),
  );

  app.delete(
    `${BASE}/:id/documents/:documentId`,
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags,
        summary: 'Delete a document and its chunks',
        params: Type.Object({ id: Type.String(), documentId: Type.String() }),
        response: { 204: { type: 'null', description: 'Deleted' } },
      },
    },
    async (request, reply) => {
      await knowledge.deleteDocument(request.params.id, request.params.documentId, request.caller);
      return reply.code(204).send();
    },
  );

  app.get(
    '/ragstore/vectorsearch',
    {
      config: { access: { roles: 'read' } },
      schema: {
        tags,
        summary: "How this instance searches knowledge bases' vectors, and why (the store's pgvector, found at start)",
        response: {
          200: Type.Object({
            search: Type.Literal('in-process'),
            pgvector: Type.Union(
              ['none', 'absent', 'available', 'installed', 'unknown'].map((value) => Type.Literal(value)),
              {
                description:
                  "none: the embedded store; absent: PostgreSQL has no 'vector' extension; available/installed: it has (not used yet)",
              },
            ),
            pgvectorVersion: Type.Optional(Type.String()),
            reason: Type.String(),
            approximateMinChunks: Type.Optional(Type.Integer()),
          }),
        },
      },
    },
    async () => knowledge.vectorSearch(),
  );

  app.get(
    `${BASE}/:id/index`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: 'How this instance searches the knowledge base: exactly or through its approximate (HNSW) index',
        params: IdParams,
        response: {
          200: Type.Object({
            chunks: Type.Integer(),
            dimensions: Type.Array(Type.Integer()),
            search: Type.Union([Type.Literal('exact'), Type.Literal('approximate')]),
            building: Type.Boolean({ description: 'an approximate index is being built' }),
            approximateLag: Type.Integer({ description: 'chunks changed since the approximate index was built' }),
            approximateMinChunks: Type.Optional(
              Type.Integer({ description: 'chunks from which an approximate index is built (absent: never)' }),
            ),
          }),
        },
      },
    },
    async (request) => knowledge.searchIndexState(request.params.id, request.caller),
  );

  app.post(
    `${BASE}/:id/search`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags,
        summary: 'Search a knowledge base as retrieval does: the best chunks with their sources and scores',
        params: IdParams,
        querystring: Type.Object(
          { version: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the current version' })) },
          { additionalProperties: true },
        ),
        body: SearchBody,
        response: { 200: Type.Object({ results: Type.Array(SearchHitSchema) }) },
      },
    },
    async (request) => {
      const knowledgeBase = await knowledge.knowledgeBase(request.params.id, request.query.version, request.caller);
      const { query, maxResults, minScore } = request.body;
      return { results: await knowledge.search(knowledgeBase, query, { maxResults, minScore }) };
    },
  );
}

const validateJsonDocuments = compileBodyValidator(JsonDocuments);

function validJsonDocuments(body: unknown): typeof JsonDocuments.static {
  if (validateJsonDocuments(body)) return body as typeof JsonDocuments.static;
  const described = describeSchemaError(validateJsonDocuments.errors![0]!, 'body');
  throw invalid(described.message, { ...described.details });
}

/** Name, content type and format of a document; 400 when neither its type nor its name says a readable format. */
function identify(
  name: string,
  contentType: string | undefined,
  where = 'the document',
): Omit<IncomingDocument, 'bytes'> {
  const format: DocumentFormat | undefined = formatOf(contentType, name);
  if (!format)
    throw invalid(
      `${where === 'the document' ? `The document '${name}'` : where} is neither ${DOCUMENT_FORMATS.join(', ')} by its content type ('${contentType ?? ''}') nor by its name's extension.`,
    );
  const given = contentType?.split(';')[0]?.trim().toLowerCase();
  return { name, contentType: given && formatOf(given, '') === format ? given : CONTENT_TYPE_OF[format], format };
}
