import type { RecordedRequest } from './fake-server.ts';

/** What a recorded provider request asked: its system text and its user/assistant text messages, per protocol. */
export interface SentConversation {
  readonly system: string | undefined;
  readonly messages: ReadonlyArray<{ readonly role: 'user' | 'assistant'; readonly text: string }>;
}

export type Protocol = 'openai' | 'anthropic' | 'gemini' | 'ollama';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

function chatMessages(messages: any[]): SentConversation {
  const system = messages.filter((m) => m.role === 'system').map((m) => textOf(m.content));
  return {
    system: system.length > 0 ? system.join('\n') : undefined,
    messages: messages
      .filter((m) => m.role === 'user' || m.role === 'assistant')
      .filter((m) => textOf(m.content) !== '')
      .map((m) => ({ role: m.role, text: textOf(m.content) })),
  };
}

export function sentConversation(protocol: Protocol, request: RecordedRequest): SentConversation {
  const body = request.body ?? {};
  switch (protocol) {
    case 'openai':
    case 'ollama':
      return chatMessages(body.messages ?? []);
    case 'anthropic': {
      const system = body.system === undefined ? undefined : textOf(body.system);
      const messages = (body.messages ?? [])
        .map((m: any) => ({ role: m.role, text: textOf(m.content) }))
        .filter((m: { text: string }) => m.text !== '');
      return { system, messages };
    }
    case 'gemini': {
      const system = body.systemInstruction === undefined ? undefined : textOf(body.systemInstruction.parts);
      const messages = (body.contents ?? [])
        .map((c: any) => ({ role: c.role === 'model' ? 'assistant' : 'user', text: textOf(c.parts) }))
        .filter((m: { text: string }) => m.text !== '');
      return { system, messages };
    }
  }
}
