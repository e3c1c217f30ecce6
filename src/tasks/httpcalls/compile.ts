import { DeploymentError } from '../../runtime/tasks.ts';
import { TemplateSyntaxError } from '../../templating/engine.ts';
import { parsePath, PathSyntaxError, type PathSegment } from '../../templating/paths.ts';
import { compileCodeValidator, type CodeValidator } from '../../properties/http-code-validator.ts';
import { compilePropertyInstructions, type CompiledPropertyInstruction } from '../../properties/instructions.ts';
import { compileObjectPath, ObjectPathSyntaxError, type CompiledObjectPath } from '../../properties/object-path.ts';
import { isRecord } from '../../shared/json.ts';
import { compileFieldTemplate, type FieldTemplate } from './field-template.ts';

/**
 * Deploy-time compilation of an HTTP-call set (reference §8.1, spec names; aliases were translated when the set
 * was stored). Every template and path is compiled here, so a turn only renders and looks up.
 */

export interface CompiledIteration {
  readonly path: CompiledObjectPath | undefined;
  readonly iterationObjectName: string;
  readonly filter: FieldTemplate | undefined;
  readonly validator: CodeValidator;
}

export interface CompiledOutputBuild extends CompiledIteration {
  readonly outputType: string;
  readonly outputValue: FieldTemplate;
}

export interface CompiledQuickReplyBuild extends CompiledIteration {
  readonly value: FieldTemplate;
  readonly expressions: FieldTemplate;
}

export interface CompiledMatcher {
  readonly path: readonly PathSegment[];
  readonly contains: string | undefined;
  readonly equals: string | undefined;
  readonly trueIfNoMatch: boolean;
}

export interface CompiledRetry {
  readonly maxRetries: number;
  readonly baseDelayMillis: number;
  readonly maxDelayMillis: number;
  readonly retryOnHttpCodes: ReadonlySet<number>;
  readonly matchers: readonly CompiledMatcher[];
}

export interface CompiledBatch {
  readonly path: CompiledObjectPath;
  readonly iterationObjectName: string;
  readonly filter: FieldTemplate | undefined;
  readonly sequential: boolean;
}

export interface CompiledHttpCall {
  readonly name: string;
  readonly description: string;
  /** Argument name -> description, when the call is an LLM tool (reference §8.6). */
  readonly parameters: Readonly<Record<string, string>>;
  readonly actions: ReadonlySet<string>;
  readonly anyAction: boolean;
  readonly saveResponse: boolean;
  readonly responseObjectName: string;
  readonly responseHeaderObjectName: string | undefined;
  readonly fireAndForget: boolean;
  readonly timeoutMillis: number | undefined;
  readonly maxResponseBytes: number | undefined;
  /** Names of the vault references of this call; the field templates refer to them by index. */
  readonly secretNames: readonly string[];
  readonly preRequest: {
    readonly instructions: readonly CompiledPropertyInstruction[];
    readonly batch: CompiledBatch | undefined;
    readonly delayMillis: number;
  };
  readonly request: {
    readonly base: FieldTemplate;
    readonly path: FieldTemplate;
    /** The path is an absolute URL (starts with `http`). */
    readonly absolute: boolean;
    readonly method: string;
    readonly headers: ReadonlyArray<readonly [string, FieldTemplate]>;
    readonly queryParams: ReadonlyArray<readonly [string, FieldTemplate]>;
    readonly contentType: string;
    readonly body: FieldTemplate | undefined;
  };
  readonly postResponse: {
    readonly instructions: readonly CompiledPropertyInstruction[];
    readonly outputs: readonly CompiledOutputBuild[];
    readonly quickReplies: readonly CompiledQuickReplyBuild[];
    readonly retry: CompiledRetry | undefined;
  };
}

export interface CompiledHttpCallSet {
  readonly targetServerUrl: string;
  readonly calls: readonly CompiledHttpCall[];
}

type Json = Record<string, unknown>;

const given = (value: unknown) => value !== undefined && value !== null;
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const nonEmpty = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;
const record = (value: unknown): Json => (isRecord(value) ? value : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : given(value) ? [value] : []);
const integer = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** Wraps template and path syntax errors into a `DeploymentError` naming the place. */
function at<T>(where: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (
      error instanceof TemplateSyntaxError ||
      error instanceof ObjectPathSyntaxError ||
      error instanceof PathSyntaxError
    ) {
      throw new DeploymentError(`${where}: ${error.message}`);
    }
    throw error;
  }
}

function compileIteration(raw: Json, where: string): CompiledIteration {
  const path = nonEmpty(raw.pathToTargetArray);
  const filter = nonEmpty(raw.templateFilterExpression);
  return at(where, () => ({
    path: path === undefined ? undefined : compileObjectPath(path),
    iterationObjectName: nonEmpty(raw.iterationObjectName) ?? 'obj',
    filter: filter === undefined ? undefined : compileFieldTemplate(filter),
    validator: compileCodeValidator(raw.httpCodeValidator),
  }));
}

/** Compiles every build instruction of `raw` (one or a list): its iteration, and the rest by `compileRest`. */
function compileBuilds<T extends object>(
  raw: unknown,
  where: string,
  compileRest: (instruction: Json, where: string) => T,
): Array<CompiledIteration & T> {
  return list(raw)
    .filter(isRecord)
    .map((instruction, i) => {
      const at_ = `${where}[${i}]`;
      return { ...compileIteration(instruction, at_), ...compileRest(instruction, at_) };
    });
}

function compileRetry(raw: unknown, where: string): CompiledRetry | undefined {
  if (!isRecord(raw)) return undefined;
  const codes = list(raw.retryOnHttpCodes).filter((code): code is number => typeof code === 'number');
  return {
    maxRetries: integer(raw.maxRetries) ?? 3,
    baseDelayMillis: integer(raw.exponentialBackoffDelayInMillis) ?? 1000,
    maxDelayMillis: integer(raw.maxBackoffDelayInMillis) ?? 30_000,
    retryOnHttpCodes: new Set(given(raw.retryOnHttpCodes) ? codes : [502, 503]),
    matchers: list(raw.responseValuePathMatchers)
      .filter(isRecord)
      .map((matcher, i) => ({
        path: at(`${where}.responseValuePathMatchers[${i}]`, () => parsePath(nonEmpty(matcher.valuePath) ?? '')),
        contains: text(matcher.contains),
        equals: text(matcher.equals),
        trueIfNoMatch: matcher.trueIfNoMatch === true,
      })),
  };
}

function compileBatch(raw: unknown, where: string): CompiledBatch | undefined {
  if (!isRecord(raw)) return undefined;
  const path = nonEmpty(raw.pathToTargetArray);
  if (path === undefined) throw new DeploymentError(`${where} needs a 'pathToTargetArray'.`);
  const filter = nonEmpty(raw.templateFilterExpression);
  return at(where, () => ({
    path: compileObjectPath(path),
    iterationObjectName: nonEmpty(raw.iterationObjectName) ?? 'obj',
    filter: filter === undefined ? undefined : compileFieldTemplate(filter),
    sequential: raw.executeCallsSequentially === true,
  }));
}

function compileCall(raw: unknown, index: number, targetServerUrl: string, source: string): CompiledHttpCall {
  const where = `httpCalls[${index}] of ${source}`;
  if (!isRecord(raw)) throw new DeploymentError(`${where} is not an object.`);
  const name = nonEmpty(raw.name);
  if (name === undefined) throw new DeploymentError(`${where} has no 'name'.`);
  const call = `the HTTP call '${name}' of ${source}`;
  const names: string[] = [];
  const request = record(raw.request);
  const preRequest = record(raw.preRequest);
  const postResponse = record(raw.postResponse);
  const path = text(request.path) ?? '';
  const absolute = /^https?:\/\//i.test(path.trim());
  const actions = list(raw.actions)
    .map((action) => String(action).trim())
    .filter((action) => action !== '');
  const contentType = nonEmpty(request.contentType) ?? 'text/plain';
  const body = text(request.body);
  const stringEntries = (value: unknown, part: string, options: { callerPlaceholders?: boolean } = {}) =>
    Object.entries(record(value)).map(
      ([key, field]) =>
        [
          key,
          at(`${call}, request.${part}.${key}`, () => compileFieldTemplate(String(field ?? ''), names, options)),
        ] as const,
    );

  return {
    name,
    description: text(raw.description) ?? '',
    parameters: Object.fromEntries(
      Object.entries(record(raw.parameters)).map(([key, value]) => [key, String(value ?? '')]),
    ),
    actions: new Set(actions),
    anyAction: actions.includes('*'),
    saveResponse: raw.saveResponse === true,
    responseObjectName: nonEmpty(raw.responseObjectName) ?? name,
    responseHeaderObjectName: nonEmpty(raw.responseHeaderObjectName),
    fireAndForget: raw.fireAndForget === true,
    timeoutMillis: integer(raw.timeoutInMillis),
    maxResponseBytes: integer(raw.maxResponseSizeInBytes),
    secretNames: names,
    preRequest: {
      instructions: compilePropertyInstructions(
        preRequest.propertyInstructions,
        `${call}, preRequest.propertyInstructions`,
      ),
      batch: compileBatch(preRequest.batchRequests, `${call}, preRequest.batchRequests`),
      delayMillis: integer(preRequest.delayBeforeExecutingInMillis) ?? 0,
    },
    request: {
      base: at(`${call}, targetServerUrl`, () =>
        compileFieldTemplate(targetServerUrl.trim().replace(/\/+$/, ''), names),
      ),
      path: at(`${call}, request.path`, () =>
        compileFieldTemplate(absolute || path === '' || path.startsWith('/') ? path.trim() : `/${path.trim()}`, names, {
          encodeValues: true,
        }),
      ),
      absolute,
      method: (nonEmpty(request.method) ?? 'GET').toUpperCase(),
      headers: stringEntries(request.headers, 'headers', { callerPlaceholders: true }),
      queryParams: stringEntries(request.queryParams, 'queryParams'),
      contentType,
      body:
        body === undefined || body === ''
          ? undefined
          : at(`${call}, request.body`, () => compileFieldTemplate(body, names)),
    },
    postResponse: {
      instructions: compilePropertyInstructions(
        postResponse.propertyInstructions,
        `${call}, postResponse.propertyInstructions`,
      ),
      outputs: compileBuilds(
        postResponse.outputBuildInstructions,
        `${call}, postResponse.outputBuildInstructions`,
        (instruction, where) => ({
          outputType: nonEmpty(instruction.outputType) ?? 'text',
          outputValue: at(where, () => compileFieldTemplate(text(instruction.outputValue) ?? '')),
        }),
      ),
      quickReplies: compileBuilds(
        postResponse.qrBuildInstruction,
        `${call}, postResponse.qrBuildInstruction`,
        (instruction, where) => ({
          value: at(where, () => compileFieldTemplate(text(instruction.quickReplyValue) ?? '')),
          expressions: at(where, () => compileFieldTemplate(text(instruction.quickReplyExpressions) ?? '')),
        }),
      ),
      retry: compileRetry(postResponse.retryApiCallInstruction, `${call}, postResponse.retryApiCallInstruction`),
    },
  };
}

/** Compiles a stored HTTP-call set; `source` names it in error messages (e.g. its `svc://` reference). */
export function compileHttpCallSet(config: unknown, source: string): CompiledHttpCallSet {
  if (!isRecord(config)) throw new DeploymentError(`The HTTP-call set ${source} is not an object.`);
  const targetServerUrl = nonEmpty(config.targetServerUrl);
  if (targetServerUrl === undefined) throw new DeploymentError(`The HTTP-call set ${source} has no 'targetServerUrl'.`);
  const calls = list(config.httpCalls ?? config.apiCalls).map((call, i) =>
    compileCall(call, i, targetServerUrl, source),
  );
  return { targetServerUrl, calls };
}
