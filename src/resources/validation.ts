import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { invalid, type AppError } from '../errors.ts';

/**
 * Two Ajv instances: configuration bodies are validated strictly (nothing removed, nothing coerced, every
 * unknown field rejected), while query strings and path parameters are coerced from text.
 */
const strictAjv = new Ajv({
  allErrors: false,
  removeAdditional: false,
  coerceTypes: false,
  useDefaults: false,
  strict: false,
});
const coercingAjv = new Ajv({
  allErrors: false,
  removeAdditional: false,
  coerceTypes: true,
  useDefaults: true,
  strict: false,
});

export function compileBodyValidator(schema: object): ValidateFunction {
  return strictAjv.compile(schema);
}

/**
 * Query strings and path parameters are flat text; Ajv coerces `Infinity` and `1e400` to a number that passes as
 * an integer (`Infinity % 1` is NaN), so the coerced values are also checked to be finite.
 */
export function compileParameterValidator(schema: object): ValidateFunction {
  const validate = coercingAjv.compile(schema);
  const validateFinite = (data: unknown): boolean => {
    if (!validate(data)) return false;
    const name = nonFiniteParameter(data);
    if (name === undefined) return true;
    validate.errors = [
      {
        instancePath: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        schemaPath: '#/type',
        keyword: 'type',
        params: { type: 'number' },
        message: 'must be a finite number',
      },
    ];
    return false;
  };
  // Fastify only calls the function and reads its `errors`.
  return Object.defineProperty(validateFinite, 'errors', { get: () => validate.errors }) as ValidateFunction;
}

/** The name of a (coerced) parameter holding a non-finite number, or of a list holding one. */
function nonFiniteParameter(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const isBad = (value: unknown) => typeof value === 'number' && !Number.isFinite(value);
  return Object.entries(data).find(([, value]) => (Array.isArray(value) ? value.some(isBad) : isBad(value)))?.[0];
}

/** `/a/0/b` (Ajv instance path) -> `$.a[0].b` */
export function jsonPath(instancePath: string, leaf?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (leaf !== undefined) segments.push(leaf);
  return segments.reduce(
    (path, segment) =>
      /^\d+$/.test(segment)
        ? `${path}[${segment}]`
        : /^[A-Za-z_$][\w$]*$/.test(segment)
          ? `${path}.${segment}`
          : `${path}[${JSON.stringify(segment)}]`,
    '$',
  );
}

/** One readable sentence for the first schema violation, naming the field and its JSON path. */
export function describeSchemaError(error: ErrorObject, subject: string): AppError {
  if (error.keyword === 'additionalProperties') {
    const field = String((error.params as { additionalProperty: string }).additionalProperty);
    const path = jsonPath(error.instancePath, field);
    return invalid(`Unknown field '${field}' at ${path} in the ${subject}.`, { field, path });
  }
  if (error.keyword === 'required') {
    const field = String((error.params as { missingProperty: string }).missingProperty);
    const path = jsonPath(error.instancePath, field);
    return invalid(`Missing required field '${field}' at ${path} in the ${subject}.`, { field, path });
  }
  const path = jsonPath(error.instancePath);
  return invalid(`Invalid value at ${path} in the ${subject}: ${error.message ?? 'does not match the schema'}.`, {
    path,
  });
}
