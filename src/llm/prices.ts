/**
 * Built-in price table (USD) used for cost tracking. Model prices are per million tokens and matched by the
 * longest model-name prefix; a model or tool not listed costs 0. Figures are list prices at the time of writing
 * and meant for relative accounting, not billing.
 */

interface ModelPrice {
  readonly input: number;
  readonly output: number;
}

const modelPrices: ReadonlyArray<readonly [prefix: string, price: ModelPrice]> = [
  ['gpt-4o-mini', { input: 0.15, output: 0.6 }],
  ['gpt-4o', { input: 2.5, output: 10 }],
  ['gpt-4.1-nano', { input: 0.1, output: 0.4 }],
  ['gpt-4.1-mini', { input: 0.4, output: 1.6 }],
  ['gpt-4.1', { input: 2, output: 8 }],
  ['gpt-4-turbo', { input: 10, output: 30 }],
  ['gpt-3.5-turbo', { input: 0.5, output: 1.5 }],
  ['o3-mini', { input: 1.1, output: 4.4 }],
  ['o4-mini', { input: 1.1, output: 4.4 }],
  ['claude-3-5-haiku', { input: 0.8, output: 4 }],
  ['claude-3-haiku', { input: 0.25, output: 1.25 }],
  ['claude-3-5-sonnet', { input: 3, output: 15 }],
  ['claude-3-7-sonnet', { input: 3, output: 15 }],
  ['claude-sonnet-4', { input: 3, output: 15 }],
  ['claude-3-opus', { input: 15, output: 75 }],
  ['claude-opus-4', { input: 15, output: 75 }],
  ['gemini-1.5-flash', { input: 0.075, output: 0.3 }],
  ['gemini-1.5-pro', { input: 1.25, output: 5 }],
  ['gemini-2.0-flash', { input: 0.1, output: 0.4 }],
  ['gemini-2.5-flash', { input: 0.3, output: 2.5 }],
  ['gemini-2.5-pro', { input: 1.25, output: 10 }],
  ['mistral-large', { input: 2, output: 6 }],
  ['mistral-small', { input: 0.2, output: 0.6 }],
];

/** Price per call of tools that cost money upstream (none of the built-in tools here call a paid service). */
const toolPrices: Readonly<Record<string, number>> = {};

export function modelCost(model: string, inputTokens: number, outputTokens: number): number {
  const name = model.toLowerCase();
  let best: ModelPrice | undefined;
  let bestLength = -1;
  for (const [prefix, price] of modelPrices) {
    if (name.startsWith(prefix) && prefix.length > bestLength) {
      best = price;
      bestLength = prefix.length;
    }
  }
  return best ? (inputTokens * best.input + outputTokens * best.output) / 1_000_000 : 0;
}

export function toolCallCost(tool: string): number {
  return toolPrices[tool] ?? 0;
}
