/**
 * CPU time per turn through `POST /v1/chat/completions` beside the native `POST /agents/<conversationId>`, in
 * process: the bench agent on a scratch server (embedded store), 64 conversations per path (the OpenAI ones started
 * through `/v1/chat/completions`, their next messages naming their `conversation_id`, as `npm run bench` sends
 * them), turns sent with Fastify's `inject` 16 at a time, CPU measured with `process.cpuUsage` around each round.
 * The rounds of the two paths alternate so that both see the same machine; compare the minimums. Not a goal of its
 * own: `npm run bench` measures the ratio as a user would.
 *
 *   node bench/openai-cpu.ts [rounds=16] [turnsPerRound=800]
 */
import { withScratchServer } from '../scripts/scratch-server.ts';
import { benchConversations, nativeTurn } from './inject-turns.ts';
import { openAiChatBodies } from './openai.ts';

const rounds = Number(process.argv[2] ?? 16);
const turnsPerRound = Number(process.argv[3] ?? 800);
const CONVERSATIONS = 64;
const CONNECTIONS = 16;

await withScratchServer(async (server) => {
  const { api, agentId, conversations } = await benchConversations(server, CONVERSATIONS);
  const chatBodies = await openAiChatBodies(api, agentId, CONVERSATIONS);
  const json = { 'content-type': 'application/json' };
  const paths = {
    native: (n: number) => nativeTurn(server, conversations[n % CONVERSATIONS]!),
    openai: (n: number) =>
      server.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: json,
        payload: chatBodies[n % CONVERSATIONS],
      }),
  };
  const perTurn: Record<keyof typeof paths, number[]> = { native: [], openai: [] };
  const round = async (name: keyof typeof paths, first: number) => {
    const turn = paths[name];
    const before = process.cpuUsage();
    for (let n = 0; n < turnsPerRound; n += CONNECTIONS) {
      const answers = await Promise.all(Array.from({ length: CONNECTIONS }, (_, k) => turn(first + n + k)));
      for (const answer of answers) if (answer.statusCode !== 200) throw new Error(`${name}: ${answer.statusCode}`);
    }
    const used = process.cpuUsage(before);
    perTurn[name].push((used.user + used.system) / turnsPerRound);
  };
  for (let n = 0; n < rounds; n++) {
    await round('native', n * turnsPerRound);
    await round('openai', n * turnsPerRound);
  }
  const min = (values: number[]) => Math.min(...values);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  for (const [name, values] of Object.entries(perTurn))
    console.log(
      `${name}: CPU per turn (µs) min ${min(values).toFixed(0)}, median ${median(values).toFixed(0)}, rounds ${values.map((v) => v.toFixed(0)).join(' ')}`,
    );
  const added = min(perTurn.openai) - min(perTurn.native);
  console.log(
    `openai adds ${added.toFixed(0)} µs per turn (minimums); native ÷ openai CPU: minimums ${(min(perTurn.native) / min(perTurn.openai)).toFixed(2)}, medians ${(median(perTurn.native) / median(perTurn.openai)).toFixed(2)}`,
  );
});
