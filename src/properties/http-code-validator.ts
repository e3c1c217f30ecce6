/**
 * `httpCodeValidator` (`{runOnHttpCode: [...], skipOnHttpCode: [...]}`) of HTTP-call property, output and
 * quick-reply instructions (reference §7.5, §8.5): for which response statuses an instruction runs.
 */

export interface CodeValidator {
  readonly runOn: ReadonlySet<number> | undefined;
  readonly skipOn: ReadonlySet<number>;
}

const ON_SUCCESS: CodeValidator = { runOn: undefined, skipOn: new Set() };

function codes(value: unknown): number[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.filter((code): code is number => typeof code === 'number');
}

export function compileCodeValidator(value: unknown): CodeValidator {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ON_SUCCESS;
  const fields = value as Record<string, unknown>;
  const runOn = codes(fields.runOnHttpCode);
  return { runOn: runOn.length > 0 ? new Set(runOn) : undefined, skipOn: new Set(codes(fields.skipOnHttpCode)) };
}

/** Whether an instruction with this validator runs for `status`: default = on every 2xx. */
export function passes(validator: CodeValidator, status: number): boolean {
  if (validator.skipOn.has(status)) return false;
  return validator.runOn ? validator.runOn.has(status) : status >= 200 && status < 300;
}
