import type { TranscriptRun } from './runs.ts';

/**
 * A run as JUnit XML, which every CI shows: one `<testsuite>` per transcript run, one `<testcase>` per step, a
 * `<failure>` with the diff of each failing field.
 */
export function junitXml(name: string, runs: readonly TranscriptRun[]): string {
  const cases = (run: TranscriptRun) => run.steps.length + (run.error === undefined ? 0 : 1);
  const failures = (run: TranscriptRun) =>
    run.steps.filter((step) => !step.passed).length + (run.error === undefined ? 0 : 1);
  const seconds = (run: TranscriptRun) => ((run.finishedOn - run.startedOn) / 1000).toFixed(3);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlText(name)}" tests="${sum(runs, cases)}" failures="${sum(runs, failures)}">`,
  ];
  for (const run of runs) {
    lines.push(
      `  <testsuite name="${xmlText(run.transcriptName || run.transcriptId)}" tests="${cases(run)}" failures="${failures(run)}" errors="0" time="${seconds(run)}" timestamp="${new Date(run.startedOn).toISOString().slice(0, 19)}">`,
    );
    if (run.error !== undefined)
      lines.push(
        '    <testcase name="run" classname="transcript">',
        `      <failure message="${xmlText(run.error)}">${xmlText(run.error)}</failure>`,
        '    </testcase>',
      );
    for (const step of run.steps) {
      const caseName = step.step === 0 ? 'step 0: conversation start' : `step ${step.step}: ${step.input}`;
      const classname = `transcript.${run.transcriptId}`;
      if (step.passed) {
        lines.push(`    <testcase name="${xmlText(caseName)}" classname="${classname}"/>`);
        continue;
      }
      const failed = step.fields.filter((field) => !field.passed);
      const message = failed.map((field) => field.field).join(', ');
      const details = failed.map((field) => `${field.field}:\n${field.diff ?? ''}`).join('\n\n');
      lines.push(
        `    <testcase name="${xmlText(caseName)}" classname="${classname}">`,
        `      <failure message="${xmlText(`failed: ${message}`)}">${xmlText(details)}</failure>`,
        '    </testcase>',
      );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

function sum(runs: readonly TranscriptRun[], count: (run: TranscriptRun) => number): number {
  return runs.reduce((total, run) => total + count(run), 0);
}

/** Text for XML content and attributes; characters XML 1.0 cannot hold are dropped. */
function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}
