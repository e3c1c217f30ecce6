import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { otlpTracesUrl } from './tracing.ts';

describe('the OTLP traces endpoint', () => {
  it('is off without the setting and the standard variables', () => {
    assert.equal(otlpTracesUrl(undefined, {}), undefined);
    assert.equal(otlpTracesUrl('  ', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), undefined);
  });

  it('takes the setting first, then the traces variable, then the base variable with /v1/traces', () => {
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    };
    assert.equal(otlpTracesUrl('http://setting:4318/v1/traces', env), 'http://setting:4318/v1/traces');
    assert.equal(otlpTracesUrl(undefined, env), 'http://traces:4318/custom');
    assert.equal(
      otlpTracesUrl(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }),
      'http://collector:4318/v1/traces',
    );
  });
});
