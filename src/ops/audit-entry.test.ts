import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { describe, it } from 'node:test';
import { canonicalJson } from '../shared/json.ts';
import { hasValidSignature, redactText, sign, type AuditDraft } from './audit-entry.ts';

/**
 * The signature format is pinned: chains already written must still verify after any change to the code. If this
 * test fails, the change breaks every existing ledger; sign new entries under a new `HMAC_VERSION` instead.
 */
describe('audit signature format (v1)', () => {
  const key = createSecretKey(Buffer.alloc(32, 7));
  const previousHmac = `v1:${'ab'.repeat(32)}`;
  // Fields deliberately out of order, with nested objects, nulls, escapes and non-ASCII text.
  const draft: AuditDraft = {
    taskType: 'ai.svc.llm',
    id: '0190f5c2a1b2c3d4e5f60718',
    conversationId: '0190f5c2a1b2c3d4e5f60701',
    agentId: '0190f5c2a1b2c3d4e5f60702',
    agentVersion: 3,
    userId: 'ada',
    environment: 'production',
    stepIndex: 1,
    workflowId: '0190f5c2a1b2c3d4e5f60703',
    taskId: '0190f5c2a1b2c3d4e5f60703:2',
    taskIndex: 4,
    durationMs: 12,
    actions: ['chat', 'greet'],
    input: { input: 'Grüße, "Welt"', context: ['lang'], actions: [] },
    output: { z: { b: 2, a: [1, null, true] }, 'output:text': 'Hallo ✓' },
    llmDetail: null,
    outcome: 'ok',
    error: null,
    timestamp: '2026-01-02T03:04:05.678Z',
    sequence: 2,
  };
  const canonicalText =
    '{"actions":["chat","greet"],"agentId":"0190f5c2a1b2c3d4e5f60702","agentVersion":3,"conversationId":"0190f5c2a1b2c3d4e5f60701",' +
    '"durationMs":12,"environment":"production","error":null,"id":"0190f5c2a1b2c3d4e5f60718",' +
    '"input":{"actions":[],"context":["lang"],"input":"Grüße, \\"Welt\\""},"llmDetail":null,"outcome":"ok",' +
    '"output":{"output:text":"Hallo ✓","z":{"a":[1,null,true],"b":2}},' +
    `"previousHmac":"${previousHmac}","sequence":2,"stepIndex":1,"taskId":"0190f5c2a1b2c3d4e5f60703:2","taskIndex":4,` +
    '"taskType":"ai.svc.llm","timestamp":"2026-01-02T03:04:05.678Z","userId":"ada","workflowId":"0190f5c2a1b2c3d4e5f60703"}';
  // HMAC-SHA256(key, `v1|` + canonicalText + `|` + previousHmac), computed independently of this code base.
  const expectedHmac = 'v1:fbe1945619aade47917def2b6f10a08f1c8031b4929bdf73850671393c4a7884';

  it('signs the canonical text of the entry (keys sorted at every level) chained to the previous signature', () => {
    const entry = sign(key, draft, previousHmac);
    const { hmac: _, ...signed } = entry;
    assert.equal(canonicalJson(signed), canonicalText);
    assert.equal(entry.hmac, expectedHmac);
  });

  it('verifies the pinned entry, and no altered copy of it', () => {
    const stored = { ...draft, previousHmac, hmac: expectedHmac };
    assert.equal(hasValidSignature(key, stored), true);
    assert.equal(hasValidSignature(key, { ...stored, userId: 'eve' }), false);
    assert.equal(hasValidSignature(key, { ...stored, previousHmac: null }), false);
    assert.equal(hasValidSignature(createSecretKey(Buffer.alloc(32, 8)), stored), false);
  });
});

describe('redactText', () => {
  it('masks every credential shape, whatever the case of its keyword', () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ['key sk-abcdefghijklmnopqrstuvwx0123', 'key sk-<REDACTED>'],
      ['key sk-ant-abcdefghijklmnopqrstuvwx0123', 'key sk-ant-<REDACTED>'],
      ['Authorization: BEARER abc.def-ghi_jkl', 'Authorization: BEARER <REDACTED>'],
      ['basic dXNlcjpwYXNzd29yZA==', 'basic <REDACTED>'],
      ['{"ApiKey": "abcdefgh1234"}', '{"ApiKey": "<REDACTED>"}'],
      ['api-key=abcdefgh1234&x=1', 'api-key=<REDACTED>&x=1'],
      ['TOKEN: abcdefgh1234', 'TOKEN: <REDACTED>'],
      ['Secret=abcdefgh1234', 'Secret=<REDACTED>'],
      ['password="abcdefgh1234"', 'password="<REDACTED>"'],
    ];
    for (const [text, masked] of cases) assert.equal(redactText(text), masked, text);
  });

  it('leaves texts without credentials and vault references as they are', () => {
    for (const text of ['hello world', 'token: ${vault:openai}', 'the basics of tokens', '']) {
      assert.equal(redactText(text), text);
    }
  });
});
