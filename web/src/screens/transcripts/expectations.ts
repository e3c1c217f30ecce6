/** The transcript editor's model: one row per checked field of a step, edited as text. No DOM. */
import type { Comparison, Expectation, Transcript, TranscriptExpected } from '../../api/types.ts';

export const FIELDS = ['output', 'quickReplies', 'actions'] as const;

export interface ExpectationRow {
  /** `output`, `quickReplies`, `actions` or `properties.<name>`. */
  readonly field: string;
  /** `''` = not checked. */
  compare: Comparison | '';
  /** JSON, or for regex the pattern itself. */
  value: string;
  tolerance: string;
  rubric: string;
}

export function rowOf(field: string, expectation: Expectation | undefined): ExpectationRow {
  const compare = expectation ? (expectation.compare ?? 'exact') : '';
  const value = expectation?.value;
  return {
    field,
    compare,
    value: value === undefined ? '' : compare === 'regex' && typeof value === 'string' ? value : JSON.stringify(value),
    tolerance: expectation?.tolerance === undefined ? '' : String(expectation.tolerance),
    rubric: expectation?.rubric ?? '',
  };
}

/** A step's rows: the three output fields, then every property it checks. */
export function rowsOf(expected: TranscriptExpected | undefined): ExpectationRow[] {
  return [
    ...FIELDS.map((field) => rowOf(field, expected?.[field])),
    ...Object.entries(expected?.properties ?? {}).map(([name, expectation]) =>
      rowOf(`properties.${name}`, expectation),
    ),
  ];
}

/** The rows back as `expected`; throws an Error naming the field whose value is not valid JSON. */
export function expectedOf(rows: readonly ExpectationRow[]): TranscriptExpected {
  const expected: TranscriptExpected = {};
  for (const row of rows) {
    if (row.compare === '') continue;
    const expectation: Expectation = { compare: row.compare };
    if (row.compare === 'regex') expectation.value = row.value;
    else if (row.value.trim() !== '' && row.compare !== 'judge' && row.compare !== 'ignore') {
      try {
        expectation.value = JSON.parse(row.value);
      } catch {
        throw new Error(`${row.field}: the expected value is not valid JSON (write text in double quotes).`);
      }
    }
    if (row.compare === 'tolerance') expectation.tolerance = Number(row.tolerance || '0');
    if (row.compare === 'judge') expectation.rubric = row.rubric;
    if (row.field.startsWith('properties.')) {
      expected.properties = { ...expected.properties, [row.field.slice('properties.'.length)]: expectation };
    } else expected[row.field as (typeof FIELDS)[number]] = expectation;
  }
  return expected;
}

/** The transcript with every step's expectations replaced by the edited rows (start first, then the turns). */
export function withExpectations(transcript: Transcript, steps: readonly (readonly ExpectationRow[])[]): Transcript {
  const [start, ...turns] = steps;
  return {
    ...transcript,
    ...(transcript.start ? { start: { ...transcript.start, expected: expectedOf(start ?? []) } } : {}),
    turns: transcript.turns.map((turn, i) => ({ ...turn, expected: expectedOf(turns[i] ?? []) })),
  };
}
