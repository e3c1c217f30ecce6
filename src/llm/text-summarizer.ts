/**
 * An extractive summary for the `textsummarizer` tool: sentences scored by the frequency of their words (stop
 * words left out), the best ones returned in their original order.
 */

const stopWords = new Set(
  'a an and are as at be but by for from has have he her his i in is it its of on or our she that the their them they this to was we were will with you your'.split(
    ' ',
  ),
);

export function summarize(text: string, maxSentences: number): string {
  const sentences =
    text
      .replace(/\s+/g, ' ')
      .trim()
      .match(/[^.!?]+[.!?]*/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? [];
  if (sentences.length <= maxSentences) return sentences.join(' ');
  const words = (sentence: string) =>
    sentence
      .toLowerCase()
      .match(/\p{L}[\p{L}\p{N}'-]*/gu)
      ?.filter((word) => !stopWords.has(word)) ?? [];
  const frequency = new Map<string, number>();
  for (const sentence of sentences)
    for (const word of words(sentence)) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const scored = sentences.map((sentence, index) => {
    const list = words(sentence);
    const score = list.reduce((sum, word) => sum + (frequency.get(word) ?? 0), 0) / Math.max(1, Math.sqrt(list.length));
    return { index, score };
  });
  const chosen = scored
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, maxSentences)
    .map((s) => s.index)
    .sort((a, b) => a - b);
  return chosen.map((index) => sentences[index]).join(' ');
}
