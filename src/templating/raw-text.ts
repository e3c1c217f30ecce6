/**
 * Text the template engine writes out as it is: every part wrapped in the raw form `{| ... |}`. A `|}` inside the
 * text would end a raw part, so the text is cut there and the `|}` itself is left between two raw parts, where it is
 * plain text (neither character starts a tag).
 */
export function rawText(text: string): string {
  return text
    .split('|}')
    .map((part) => `{|${part}|}`)
    .join('|}');
}
