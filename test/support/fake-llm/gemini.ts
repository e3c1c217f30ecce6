import { defaultUsage, deltas, FakeProvider, jsonReply, sseReply, type Encoder } from './fake-server.ts';

/**
 * Gemini (`POST /v1beta/models/<model>:generateContent`, and `:streamGenerateContent?alt=sse` as SSE), with
 * functionCall parts.
 */

export const encodeGemini: Encoder = (script, request) => {
  if ('hang' in script) throw new Error('a hanging reply has no body');
  if ('status' in script) {
    return jsonReply(script.status, {
      error: {
        code: script.status,
        message: script.message ?? `scripted failure ${script.status}`,
        status: 'INTERNAL',
      },
    });
  }
  const usage = script.usage ?? defaultUsage;
  const usageMetadata = {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + usage.output,
  };
  const candidate = (parts: unknown[], finishReason?: string) => ({
    content: { role: 'model', parts },
    index: 0,
    ...(finishReason ? { finishReason } : {}),
  });
  const parts =
    'text' in script
      ? [{ text: script.text }]
      : script.toolCalls.map((call) => ({ functionCall: { name: call.name, args: call.args } }));
  if (!request.path.includes(':streamGenerateContent')) {
    return jsonReply(200, { candidates: [candidate(parts, 'STOP')], usageMetadata, modelVersion: 'gemini-fake' });
  }
  const pieces = 'text' in script ? deltas(script.text).map((text) => [{ text }]) : [parts];
  return sseReply(
    pieces.map((piece, index) => ({
      data:
        index === pieces.length - 1
          ? { candidates: [candidate(piece, 'STOP')], usageMetadata, modelVersion: 'gemini-fake' }
          : { candidates: [candidate(piece)], modelVersion: 'gemini-fake' },
    })),
  );
};

export function startFakeGemini(): Promise<FakeProvider> {
  return new FakeProvider(encodeGemini).start();
}
