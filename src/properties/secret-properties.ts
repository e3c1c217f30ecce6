import type { Turn } from '../runtime/turn.ts';
import { scrubSecretText, scrubSecretValue } from '../security/secret-scrubbing.ts';
import { isSecretName, SECRET_NAME_RULE, vaultReference } from '../security/vault-names.ts';

/**
 * Scope `secret` (reference §7.4): the value goes to the secrets vault as `<agentId>.<name>`, the property (scope
 * `conversation`) keeps only the reference `${vault:<agentId>.<name>}`, and the value is scrubbed from the step.
 * Without a vault the run fails (fail-closed: a secret is never kept as plain text).
 */

/** Where secret-scoped properties put their values (the vault, for the default tenant). */
export interface SecretWriter {
  writeSecret(name: string, value: string): Promise<void>;
}

/** The text a secret value is stored and scrubbed as. */
export function secretText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * Masks the secret wherever the current step holds it (the input, a context value, a saved response, ...), except
 * in properties, which other instructions set on purpose.
 */
export function scrubStep(turn: Turn, secret: string): void {
  if (secret === '') return;
  turn.maskInputs((text) => scrubSecretText(text, secret));
  for (const entry of turn.entriesWithPrefix('')) {
    if (entry.key.startsWith('properties:')) continue;
    const value = scrubSecretValue(entry.value, secret);
    if (value !== entry.value) turn.set(entry.key, value, entry.public);
  }
  for (const [key, item] of Object.entries(turn.output)) {
    if (key === 'properties') continue;
    const value = scrubSecretValue(item, secret);
    if (value !== item) turn.setOutput(key, value);
  }
}

/** Writes the secret to the vault and sets the property to its reference; the value leaves the step either way. */
export async function storeSecretProperty(
  turn: Turn,
  name: string,
  value: unknown,
  writer: SecretWriter | undefined,
): Promise<void> {
  const text = secretText(value);
  if (text === '') return; // nothing to keep
  const secretName = `${turn.agentId}.${name}`;
  scrubStep(turn, text);
  const failure = (reason: string) => new Error(`The secret-scoped property '${name}' cannot be set: ${reason}`);
  if (!writer)
    throw failure(
      'this service has no secrets vault (set svc.vault.master-key); secret values are never kept as plain text.',
    );
  if (!isSecretName(secretName))
    throw failure(`its vault name '${secretName}' is not a valid secret name (${SECRET_NAME_RULE}).`);
  try {
    await writer.writeSecret(secretName, text);
  } catch (error) {
    throw failure((error as Error).message);
  }
  turn.setProperty({ name, value: vaultReference(secretName), scope: 'conversation' });
}
