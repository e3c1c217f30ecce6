import { createHmac, timingSafeEqual } from 'node:crypto';

/** Request signatures of the messaging platforms, compared in constant time. */

/** Whether two texts are equal, in time that does not depend on where they differ. */
export function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function hmacHex(algorithm: 'sha1' | 'sha256', secret: string, data: Buffer | string): string {
  return createHmac(algorithm, secret).update(data).digest('hex');
}

/**
 * Messenger: `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the app secret>`, or the older
 * `X-Hub-Signature: sha1=<HMAC-SHA1>`. The SHA-256 header wins when both are sent.
 */
export function facebookSignatureValid(
  rawBody: Buffer,
  headers: { sha256?: string | undefined; sha1?: string | undefined },
  appSecret: string,
): boolean {
  if (headers.sha256 !== undefined)
    return sameSecret(`sha256=${hmacHex('sha256', appSecret, rawBody)}`, headers.sha256);
  if (headers.sha1 !== undefined) return sameSecret(`sha1=${hmacHex('sha1', appSecret, rawBody)}`, headers.sha1);
  return false;
}

/** Slack: `X-Slack-Signature: v0=<HMAC-SHA256 of "v0:<timestamp>:<raw body>" with the signing secret>`. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  return `v0=${hmacHex('sha256', signingSecret, Buffer.concat([Buffer.from(`v0:${timestamp}:`), Buffer.from(rawBody)]))}`;
}

/** A Slack request is genuine when signed with the secret and its timestamp is within `windowSeconds` of `now`. */
export function slackSignatureValid(
  rawBody: Buffer,
  headers: { timestamp?: string | undefined; signature?: string | undefined },
  signingSecret: string,
  now: number,
  windowSeconds: number,
): boolean {
  const { timestamp, signature } = headers;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(now / 1000 - Number(timestamp)) > windowSeconds) return false;
  return sameSecret(slackSignature(signingSecret, timestamp, rawBody), signature);
}
