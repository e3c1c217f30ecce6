import { Type } from '@sinclair/typebox';
import { defineTask } from '../../src/runtime/tasks.ts';

/**
 * A test task answering without the rule engine: `Welcome!` to a start, `<prefix><input>` to a message (prefix
 * `echo: ` unless its config gives one); `fail` throws. Registered from outside, as an embedder's task would be.
 */
export const echoTask = defineTask({
  type: 'ai.svc.test.echo',
  configSchema: Type.Object(
    { prefix: Type.Optional(Type.String({ description: "Put before the echoed input (default 'echo: ')." })) },
    { additionalProperties: false },
  ),
  extensionsSchema: Type.Object({}, { additionalProperties: false }),
  compile: (config) => {
    const prefix = config.prefix ?? 'echo: ';
    return {
      type: 'ai.svc.test.echo',
      execute(turn) {
        if (turn.input === 'fail') throw new Error('failing on purpose');
        turn.appendOutput('output', {
          type: 'text',
          text: turn.input.trim() === '' ? 'Welcome!' : `${prefix}${turn.input}`,
        });
      },
    };
  },
});
