import type { JSONSchema7, ModelMessage, OutputInterface } from 'ai';
import { Ajv, type ValidateFunction } from 'ajv';
import { ParameterError, text, type Parameters } from './parameters.ts';

/**
 * Structured answers: JSON mode (`responseFormat` parameter "json") or an answer that must match a JSON schema
 * (`responseSchema`). The provider is asked for JSON through the AI SDK's response format (OpenAI's
 * `response_format`, Ollama's `format`, ...); the answer is then checked here, because not every provider
 * enforces a schema. A failing answer earns the model one repair request naming the problem.
 */

const schemaAjv = new Ajv({ allErrors: true, strict: false, validateSchema: true });

export interface AnswerFormat {
  readonly schema: JSONSchema7 | undefined;
  readonly validate: ValidateFunction | undefined;
}

export class ResponseSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResponseSchemaError';
  }
}

/**
 * Whether the `responseFormat` parameter asks for JSON: "json" yes, "text" or nothing no; anything else is a
 * configuration error.
 */
export function jsonModeOf(parameters: Parameters): boolean {
  const format = text(parameters, 'responseFormat')?.toLowerCase();
  if (format === undefined || format === 'text') return false;
  if (format === 'json' || format === 'json_object') return true;
  throw new ParameterError(`The parameter 'responseFormat' must be "json" or "text", not '${format}'.`);
}

/** Compiles a `responseSchema`; an invalid schema throws a ResponseSchemaError saying why. */
export function compileAnswerFormat(schema: Readonly<Record<string, unknown>> | undefined): AnswerFormat {
  if (schema === undefined) return { schema: undefined, validate: undefined };
  try {
    return { schema: schema as JSONSchema7, validate: schemaAjv.compile(schema) };
  } catch (error) {
    throw new ResponseSchemaError(
      `'responseSchema' is not a valid JSON schema: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * The AI SDK output specification that asks the provider for JSON (with the schema when there is one) and hands
 * the text back unparsed: the check and the repair request are ours.
 */
export function jsonAnswerOutput(format: AnswerFormat): OutputInterface<string, string, never> {
  return {
    name: 'json',
    responseFormat: Promise.resolve({
      type: 'json' as const,
      ...(format.schema === undefined ? {} : { schema: format.schema, name: 'answer' }),
    }),
    parseCompleteOutput: async ({ text }) => text,
    parsePartialOutput: async () => undefined,
    createElementStreamTransform: () => undefined,
  };
}

/** A JSON text, also inside a Markdown code fence. */
export function unfencedJson(text: string): string {
  return (/^\s*```(?:json)?[ \t]*\n([\s\S]*?)\n\s*```\s*$/i.exec(text)?.[1] ?? text).trim();
}

/** What is wrong with an answer (not JSON, or not matching the schema), or undefined when it is fine. */
export function answerProblem(text: string, format: AnswerFormat): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(unfencedJson(text));
  } catch (error) {
    return `the answer is not JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (format.validate && !format.validate(value))
    return `the answer does not match the schema: ${schemaAjv.errorsText(format.validate.errors, { dataVar: 'answer' })}`;
  return undefined;
}

/** The conversation continued with the failed answer and a request to correct it. */
export function repairMessages(messages: readonly ModelMessage[], answer: string, problem: string): ModelMessage[] {
  return [
    ...messages,
    { role: 'assistant', content: answer },
    {
      role: 'user',
      content: `Your previous answer cannot be used: ${problem}. Answer again with only the corrected JSON, no other text.`,
    },
  ];
}
