export {
  FakeProvider,
  type RecordedRequest,
  type Script,
  type ScriptOf,
  type ScriptedToolCall,
} from './fake-server.ts';
export { startFakeAnthropic } from './anthropic.ts';
export { startFakeGemini } from './gemini.ts';
export { startFakeOllama } from './ollama.ts';
export { startFakeOpenAi } from './openai.ts';
export { fakeEmbedding, FakeEmbeddings, SIGV4_AUTHORIZATION, startFakeEmbeddings } from './embeddings.ts';
export { sentConversation, type Protocol, type SentConversation } from './conversation.ts';
