import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import {
  aliasRenamer,
  arrayField,
  checkPropertyInstructions,
  closed,
  fieldPath,
  HttpCodeValidatorSchema,
  indexPath,
  oneOrMany,
  PropertyInstructionList,
  stringMap,
  StringList,
  type AliasSpec,
} from './common.ts';
import { isRecord } from '../../shared/json.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

const pathToTargetArray = Type.Optional(
  Type.String({ description: 'Path of the array to iterate in the template data.' }),
);
const iterationObjectName = Type.Optional(
  Type.String({ description: "Name the current element is bound to (default 'obj')." }),
);
const templateFilterExpression = Type.Optional(
  Type.String({ description: "Template rendered per element; only elements rendering 'true' are used." }),
);

export const BatchRequestsSchema = closed(
  {
    pathToTargetArray,
    iterationObjectName,
    templateFilterExpression,
    executeCallsSequentially: Type.Optional(
      Type.Boolean({ description: 'Send the requests one after the other instead of in parallel.' }),
    ),
  },
  { description: 'Sends one request per element of an array; the responses are collected into a list.' },
);

export const PreRequestSchema = closed(
  {
    propertyInstructions: Type.Optional(PropertyInstructionList),
    batchRequests: Type.Optional(BatchRequestsSchema),
    delayBeforeExecutingInMillis: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Wait this long before sending (default 0).' }),
    ),
  },
  { description: 'What happens before the request is sent.' },
);

export const HttpRequestSchema = closed(
  {
    path: Type.Optional(
      Type.String({
        description: 'Path appended to targetServerUrl (templated); a path starting with http is an absolute URL.',
      }),
    ),
    method: Type.Optional(
      Type.String({ description: `HTTP method, case-insensitive: ${HTTP_METHODS.join(', ')} (default GET).` }),
    ),
    headers: Type.Optional(stringMap('Request headers; values are templated and may hold ${vault:NAME} references.')),
    queryParams: Type.Optional(stringMap('Query parameters; values are templated, e.g. {context.city}.')),
    contentType: Type.Optional(
      Type.String({ description: "Content type of the body, e.g. 'application/json' (default text/plain)." }),
    ),
    body: Type.Optional(Type.String({ description: 'Request body text (templated).' })),
  },
  { description: 'The request to send.' },
);

export const OutputBuildInstructionSchema = closed(
  {
    pathToTargetArray,
    iterationObjectName,
    templateFilterExpression,
    outputType: Type.Optional(Type.String({ description: "Output item type (default 'text')." })),
    outputValue: Type.Optional(Type.String({ description: 'Template rendered per element into an output.' })),
    httpCodeValidator: Type.Optional(HttpCodeValidatorSchema),
  },
  { description: 'Builds outputs from an array of the response.' },
);

export const QrBuildInstructionSchema = closed(
  {
    pathToTargetArray,
    iterationObjectName,
    templateFilterExpression,
    quickReplyValue: Type.Optional(
      Type.String({ description: 'Template rendered per element into the quick reply value.' }),
    ),
    quickReplyExpressions: Type.Optional(
      Type.String({ description: 'Template rendered per element into the quick reply expressions.' }),
    ),
    httpCodeValidator: Type.Optional(HttpCodeValidatorSchema),
  },
  { description: 'Builds quick replies from an array of the response.' },
);

export const ResponseValuePathMatcherSchema = closed(
  {
    valuePath: Type.Optional(Type.String({ description: 'Path into the response.' })),
    contains: Type.Optional(Type.String()),
    equals: Type.Optional(Type.String()),
    trueIfNoMatch: Type.Optional(
      Type.Boolean({ description: 'Signal a retry when the value does not match (instead of when it does).' }),
    ),
  },
  { description: 'Checks a value of the response; a signal makes the call retry.' },
);

export const RetryInstructionSchema = closed(
  {
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, description: 'Retries at most (default 3).' })),
    exponentialBackoffDelayInMillis: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Base delay, doubled per attempt (default 1000).' }),
    ),
    maxBackoffDelayInMillis: Type.Optional(Type.Integer({ minimum: 0, description: 'Largest delay (default 30000).' })),
    retryOnHttpCodes: Type.Optional(
      Type.Array(Type.Integer(), { description: 'Status codes that cause a retry (default 502, 503).' }),
    ),
    responseValuePathMatchers: Type.Optional(Type.Array(ResponseValuePathMatcherSchema)),
  },
  { description: 'When and how often the call is retried.' },
);

export const PostResponseSchema = closed(
  {
    propertyInstructions: Type.Optional(PropertyInstructionList),
    outputBuildInstructions: Type.Optional(
      Type.Array(OutputBuildInstructionSchema, { description: 'Output build instructions.' }),
    ),
    qrBuildInstruction: Type.Optional(
      oneOrMany(
        QrBuildInstructionSchema,
        'Builds quick replies from the response: one instruction, or a list of them.',
      ),
    ),
    retryApiCallInstruction: Type.Optional(RetryInstructionSchema),
  },
  { description: 'What happens with the response: property instructions, then outputs, then quick replies.' },
);

export const HttpCallSchema = closed(
  {
    name: Type.String({
      minLength: 1,
      description: "Call name, unique in the set; the action 'httpcall(<name>)' triggers it.",
    }),
    description: Type.Optional(
      Type.String({ description: 'What the call does (used when it is exposed as an LLM tool).' }),
    ),
    actions: Type.Optional(StringList("Actions that trigger the call ('*' = any action).")),
    saveResponse: Type.Optional(Type.Boolean({ description: 'Store the response in memory.' })),
    responseObjectName: Type.Optional(
      Type.String({
        description: 'Name under which the response is stored: memory.current.httpCalls.<responseObjectName>.',
      }),
    ),
    responseHeaderObjectName: Type.Optional(
      Type.String({ description: 'Name under which the response headers are stored.' }),
    ),
    fireAndForget: Type.Optional(
      Type.Boolean({ description: 'Send asynchronously and store nothing but the request.' }),
    ),
    isBatchCalls: Type.Optional(
      Type.Boolean({ description: 'The call is a batch call (see preRequest.batchRequests).' }),
    ),
    iterationObjectName: iterationObjectName,
    timeoutInMillis: Type.Optional(Type.Integer({ minimum: 1, description: 'Request timeout (default 30000).' })),
    maxResponseSizeInBytes: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Longer responses are truncated (default 2000000).' }),
    ),
    parameters: Type.Optional(stringMap('Arguments of the call when exposed as an LLM tool: name -> description.')),
    preRequest: Type.Optional(PreRequestSchema),
    request: Type.Optional(HttpRequestSchema),
    postResponse: Type.Optional(PostResponseSchema),
  },
  { description: 'One HTTP call.' },
);

export const HttpCallSetSchema = closed(
  {
    targetServerUrl: Type.String({ minLength: 1, description: 'Base URL of the target API.' }),
    httpCalls: Type.Optional(Type.Array(HttpCallSchema, { description: 'The calls.' })),
  },
  { title: 'HttpCallSet', description: 'An HTTP-call set: calls to one API, triggered by actions.' },
);
export type HttpCallSet = Static<typeof HttpCallSetSchema>;

/** A `qrBuildInstruction` list of one becomes the spec's single object; an empty list is dropped. */
function singleQrInstruction(value: unknown): unknown {
  if (!isRecord(value) || !Array.isArray(value.qrBuildInstruction)) return value;
  const list = value.qrBuildInstruction as unknown[];
  if (list.length > 1) return value;
  const { qrBuildInstruction: _, ...rest } = value;
  return list.length === 1 ? { ...rest, qrBuildInstruction: list[0] } : rest;
}

const aliases: AliasSpec = {
  aliases: { apiCalls: 'httpCalls' },
  fields: {
    httpCalls: {
      fields: {
        postResponse: {
          aliases: { qrBuildInstructions: 'qrBuildInstruction', retryHttpCallInstruction: 'retryApiCallInstruction' },
          value: singleQrInstruction,
        },
      },
    },
  },
};

function checkSemantics(body: unknown): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  const seen = new Map<string, number>();
  arrayField(body, 'httpCalls').forEach((call, i) => {
    const path = indexPath('$.httpCalls', i);
    const name = String(call.name);
    const first = seen.get(name);
    if (first !== undefined) {
      problems.push({
        path: fieldPath(path, 'name'),
        message: `The HTTP call name '${name}' at ${path} is already used by $.httpCalls[${first}]; names must be unique.`,
      });
    } else {
      seen.set(name, i);
    }
    const request = call.request;
    if (isRecord(request) && typeof request.method === 'string') {
      const method = request.method;
      if (!(HTTP_METHODS as readonly string[]).includes(method.toUpperCase())) {
        const at = fieldPath(fieldPath(path, 'request'), 'method');
        problems.push({
          path: at,
          message: `The HTTP method '${method}' at ${at} is not one of ${HTTP_METHODS.join(', ')}.`,
        });
      }
    }
    for (const part of ['preRequest', 'postResponse']) {
      const holder = call[part];
      if (isRecord(holder)) {
        const at = fieldPath(fieldPath(path, part), 'propertyInstructions');
        problems.push(...checkPropertyInstructions(holder.propertyInstructions, at));
      }
    }
  });
  return problems;
}

export const httpCallsKind: ResourceKindDefinition = {
  ...kindNamed('httpcalls'),
  schema: HttpCallSetSchema,
  renameAliases: aliasRenamer(aliases, HttpCallSetSchema),
  checkSemantics,
};
