import { createCipheriv, createDecipheriv, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { SealedBox } from '../storage/secret-ports.ts';

/**
 * The vault's cryptography (envelope encryption):
 * - key-encryption key (KEK) = PBKDF2-HMAC-SHA256(master key, KEK_SALT, 600,000 iterations) -> 256 bits, derived
 *   once at start-up. The salt is fixed and public (`svc.vault.kek.v1`): the master key must itself be a strong
 *   random value; the work factor only slows guessing of weak ones.
 * - key check value = HMAC-SHA256(KEK, `svc.vault.key-check.v1`): stored on first use, compared at start-up, so a
 *   wrong master key is refused before any secret is touched.
 * - a random 256-bit data key per tenant, stored wrapped (AES-256-GCM) by the KEK;
 * - each secret value AES-256-GCM with its tenant's data key, a random 96-bit IV and a 128-bit tag.
 * Every seal binds additional authenticated data naming what it protects, so a sealed value moved to another
 * tenant or name fails to open.
 */

export const KEK_SALT = 'svc.vault.kek.v1';
export const KEK_ITERATIONS = 600_000;
const KEY_CHECK_LABEL = 'svc.vault.key-check.v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value does not open: wrong key, changed ciphertext, IV or tag, or moved to another name. */
export class VaultIntegrityError extends Error {
  constructor(what: string) {
    super(`The vault cannot open ${what}: it was changed, moved, or sealed with another master key.`);
    this.name = 'VaultIntegrityError';
  }
}

const pbkdf2Async = promisify(pbkdf2);

export async function deriveKeyEncryptionKey(masterKey: string, iterations = KEK_ITERATIONS): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(masterKey, 'utf8'), KEK_SALT, iterations, KEY_BYTES, 'sha256');
}

/** Hex HMAC of a fixed label under the KEK: identifies the key without revealing it. */
export function keyCheckValue(kek: Buffer): string {
  return createHmac('sha256', kek).update(KEY_CHECK_LABEL).digest('hex');
}

export function sameKeyCheckValue(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function seal(key: Buffer, plaintext: Buffer, aad: string): SealedBox {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/** Opens a sealed box; `what` names it in the error (never its content). */
export function open(key: Buffer, box: SealedBox, aad: string, what: string): Buffer {
  const iv = Buffer.from(box.iv, 'base64');
  const tag = Buffer.from(box.tag, 'base64');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new VaultIntegrityError(what);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(Buffer.from(box.ciphertext, 'base64')), decipher.final()]);
  } catch {
    throw new VaultIntegrityError(what);
  }
}

export const dataKeyAad = (tenant: string) => `svc.vault/data-key/${tenant}`;
export const secretAad = (tenant: string, name: string) => `svc.vault/secret/${tenant}/${name}`;
