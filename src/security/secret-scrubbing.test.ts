import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scrubCredentialsInText } from './secret-scrubbing.ts';

describe('scrubCredentialsInText', () => {
  it('masks the user part of URLs, credential query parameters and authorization values', () => {
    assert.equal(
      scrubCredentialsInText(
        "the URL 'https://admin:pa55word@api.example.org/x?q=Linz&api_key=k3y-value' is not valid",
      ),
      "the URL 'https://<REDACTED>@api.example.org/x?q=Linz&api_key=<REDACTED>' is not valid",
    );
    assert.equal(
      scrubCredentialsInText('http://u@h/?access_token=abc&Signature=xyz#top'),
      'http://<REDACTED>@h/?access_token=<REDACTED>&Signature=<REDACTED>#top',
    );
    assert.equal(
      scrubCredentialsInText('sent Bearer eyJhbGciOi.x-y_z= and Basic dXNlcjpwdw=='),
      'sent Bearer <REDACTED> and Basic <REDACTED>',
    );
  });

  it('leaves texts without credentials as they are', () => {
    const text =
      "HTTP call 'weather' failed: the connection was refused (api.example.org:443); the token expired; see https://example.org/a?q=1";
    assert.equal(scrubCredentialsInText(text), text);
  });
});
