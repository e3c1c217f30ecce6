/** A simple line diff (longest common subsequence) for comparing two versions' pretty JSON. Pure. */

export interface DiffLine {
  readonly kind: 'same' | 'added' | 'removed';
  readonly text: string;
  /** 1-based line in the old text (same, removed). */
  readonly oldLine?: number;
  /** 1-based line in the new text (same, added). */
  readonly newLine?: number;
}

export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  // Trim the common head and tail first: versions usually differ in a few lines.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const rows = am.length + 1;
  const cols = bm.length + 1;
  const lcs = new Uint32Array(rows * cols);
  for (let i = am.length - 1; i >= 0; i--) {
    for (let j = bm.length - 1; j >= 0; j--) {
      lcs[i * cols + j] =
        am[i] === bm[j] ? lcs[(i + 1) * cols + j + 1]! + 1 : Math.max(lcs[(i + 1) * cols + j]!, lcs[i * cols + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  for (let k = 0; k < head; k++) out.push({ kind: 'same', text: a[k]!, oldLine: k + 1, newLine: k + 1 });
  let i = 0;
  let j = 0;
  while (i < am.length || j < bm.length) {
    if (i < am.length && j < bm.length && am[i] === bm[j]) {
      out.push({ kind: 'same', text: am[i]!, oldLine: head + i + 1, newLine: head + j + 1 });
      i++;
      j++;
    } else if (j < bm.length && (i >= am.length || lcs[i * cols + j + 1]! >= lcs[(i + 1) * cols + j]!)) {
      out.push({ kind: 'added', text: bm[j]!, newLine: head + j + 1 });
      j++;
    } else {
      out.push({ kind: 'removed', text: am[i]!, oldLine: head + i + 1 });
      i++;
    }
  }
  for (let k = 0; k < tail; k++) {
    out.push({
      kind: 'same',
      text: a[a.length - tail + k]!,
      oldLine: a.length - tail + k + 1,
      newLine: b.length - tail + k + 1,
    });
  }
  return out;
}

export function diffSummary(lines: readonly DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((l) => l.kind === 'added').length,
    removed: lines.filter((l) => l.kind === 'removed').length,
  };
}
