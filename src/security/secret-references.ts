/**
 * `${vault:NAME}` references in configuration (HTTP-call fields, LLM parameters). They are resolved at run time
 * only, by a `SecretResolver`; a resolved value must never reach a log, a response, the conversation memory, an
 * export or an error, so resolvers also report which values they put in, for redaction.
 */
export const VAULT_REFERENCE = /\$\{vault:([^}\s]+)\}/g;

export interface ResolvedText {
  readonly text: string;
  /** The secret values that went into `text` (to be masked wherever the text could be shown). */
  readonly secretValues: readonly string[];
}

export interface SecretResolver {
  /**
   * Replaces every `${vault:NAME}` (also `${vault:tenant/NAME}`) in `text` by the secret's value. Rejects with a
   * `MissingSecretError` naming the secret (never a value) when a secret is unknown or the vault is disabled.
   */
  resolve(text: string): Promise<ResolvedText>;
}

export class MissingSecretError extends Error {
  readonly secretName: string;

  constructor(secretName: string, reason: string) {
    super(`Secret '${secretName}' ${reason}.`);
    this.name = 'MissingSecretError';
    this.secretName = secretName;
  }
}

export function hasVaultReference(text: string): boolean {
  VAULT_REFERENCE.lastIndex = 0;
  return VAULT_REFERENCE.test(text);
}

export const REDACTED = '<REDACTED>';

/** Masks every occurrence of the given secret values in `text`. */
export function redact(text: string, secretValues: readonly string[]): string {
  let result = text;
  for (const value of secretValues) if (value.length > 0) result = result.split(value).join(REDACTED);
  return result;
}
