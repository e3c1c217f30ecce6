/** Reading LLM task parameters (all values are text, reference §9.2). */

export type Parameters = Readonly<Record<string, string>>;

/** The first non-blank value among the given names. */
export function text(parameters: Parameters, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = parameters[name]?.trim();
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

export class ParameterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParameterError';
  }
}

export function number(parameters: Parameters, ...names: string[]): number | undefined {
  for (const name of names) {
    const value = text(parameters, name);
    if (value === undefined) continue;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new ParameterError(`The parameter '${name}' must be a number, not '${value}'.`);
    return parsed;
  }
  return undefined;
}

export function integer(parameters: Parameters, ...names: string[]): number | undefined {
  const value = number(parameters, ...names);
  if (value !== undefined && !Number.isInteger(value))
    throw new ParameterError(`The parameter '${names[0]}' must be a whole number, not '${value}'.`);
  return value;
}

/** `true`/`false` (any case); anything else is the default. */
export function flag(parameters: Parameters, name: string, defaultValue: boolean): boolean {
  const value = text(parameters, name)?.toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return defaultValue;
}

/** Parameters that hold credentials: never logged, never part of a cache key in clear, redacted from errors. */
export const CREDENTIAL_PARAMETERS: ReadonlySet<string> = new Set([
  'apiKey',
  'accessToken',
  'authToken',
  'nonAzureApiKey',
  'accessKeyId',
  'secretAccessKey',
  'sessionToken',
]);

/** Parameters that shape the model client (the rest shape the call or the messages). */
export const CONNECTION_PARAMETERS: readonly string[] = [
  ...CREDENTIAL_PARAMETERS,
  'modelName',
  'model',
  'modelId',
  'modelID',
  'deploymentName',
  'baseUrl',
  'endpoint',
  'projectId',
  'location',
  'publisher',
  'region',
  'compartmentId',
  'configProfile',
  'apiVersion',
  'organization',
  'resourceName',
];
