import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { facebookSignatureValid, slackSignature, slackSignatureValid } from './signatures.ts';

const body = Buffer.from('{"object":"page","entry":[]}');

describe('channel request signatures', () => {
  it('Messenger: SHA-256 of the raw body with the app secret, the older SHA-1 too; wrong or missing is refused', () => {
    const sha256 = `sha256=${createHmac('sha256', 'app-secret').update(body).digest('hex')}`;
    const sha1 = `sha1=${createHmac('sha1', 'app-secret').update(body).digest('hex')}`;
    assert.equal(facebookSignatureValid(body, { sha256 }, 'app-secret'), true);
    assert.equal(facebookSignatureValid(body, { sha1 }, 'app-secret'), true);
    assert.equal(facebookSignatureValid(body, { sha256 }, 'other-secret'), false);
    assert.equal(facebookSignatureValid(Buffer.from(`${body} `), { sha256 }, 'app-secret'), false, 'the body changed');
    assert.equal(facebookSignatureValid(body, { sha256: sha256.slice(0, -1) }, 'app-secret'), false);
    assert.equal(facebookSignatureValid(body, { sha256: 'sha256=' }, 'app-secret'), false);
    assert.equal(facebookSignatureValid(body, {}, 'app-secret'), false);
    assert.equal(facebookSignatureValid(body, { sha256: 'garbage', sha1 }, 'app-secret'), false, 'SHA-256 wins');
  });

  it('Slack: v0 signature over timestamp and body, within the timestamp window', () => {
    const now = 1_700_000_000_000;
    const timestamp = String(now / 1000);
    const signature = slackSignature('signing-secret', timestamp, body);
    // Slack's documented example construction: v0=HMAC-SHA256("v0:" + timestamp + ":" + body)
    assert.equal(
      signature,
      `v0=${createHmac('sha256', 'signing-secret').update(`v0:${timestamp}:${body}`).digest('hex')}`,
    );
    assert.equal(slackSignatureValid(body, { timestamp, signature }, 'signing-secret', now, 300), true);
    assert.equal(slackSignatureValid(body, { timestamp, signature }, 'signing-secret', now + 301_000, 300), false);
    assert.equal(slackSignatureValid(body, { timestamp, signature }, 'other', now, 300), false);
    assert.equal(slackSignatureValid(body, { signature }, 'signing-secret', now, 300), false);
    assert.equal(slackSignatureValid(body, { timestamp: 'soon', signature }, 'signing-secret', now, 300), false);
    assert.equal(slackSignatureValid(body, { timestamp }, 'signing-secret', now, 300), false);
  });
});
