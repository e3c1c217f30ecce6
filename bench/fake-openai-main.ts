/**
 * The bench's LLM provider: a loopback server speaking OpenAI's chat completions wire format (non-streaming) that
 * answers every request at once with the same short completion; port from BENCH_PORT. Its own requests per second
 * under load are the LLM-turn workload's baseline.
 */
import { createServer } from 'node:http';

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'A short answer.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 },
});

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(completion),
    });
    response.end(completion);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
