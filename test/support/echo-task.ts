import type { LifecycleTask } from '../../src/runtime/tasks.ts';

/** A test task answering without the rule engine: `Welcome!` to a start, `echo: <input>` to a message; `fail` throws. */
export const echoTask: LifecycleTask = {
  type: 'ai.svc.test.echo',
  compile: () => ({
    type: 'ai.svc.test.echo',
    execute(turn) {
      if (turn.input === 'fail') throw new Error('failing on purpose');
      turn.appendOutput('output', { type: 'text', text: turn.input.trim() === '' ? 'Welcome!' : `echo: ${turn.input}` });
    },
  }),
};
