import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { AppError } from '../errors.ts';
import { Coordinator } from './coordinator.ts';

test('work of one conversation runs one at a time, in arrival order', async () => {
  const coordinator = new Coordinator(10);
  const log: string[] = [];
  const work = (name: string, ms: number) => async () => {
    log.push(`start ${name}`);
    await sleep(ms);
    log.push(`end ${name}`);
    return name;
  };
  const results = await Promise.all([
    coordinator.run('a', work('1', 20)),
    coordinator.run('a', work('2', 1)),
    coordinator.run('a', work('3', 5)),
  ]);
  assert.deepEqual(results, ['1', '2', '3']);
  assert.deepEqual(log, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  assert.equal(coordinator.activeConversations, 0, 'nothing is left queued');
});

test('different conversations run in parallel', async () => {
  const coordinator = new Coordinator(10);
  const log: string[] = [];
  await Promise.all(
    ['a', 'b'].map((id) =>
      coordinator.run(id, async () => {
        log.push(`start ${id}`);
        await sleep(10);
        log.push(`end ${id}`);
      }),
    ),
  );
  assert.deepEqual(log, ['start a', 'start b', 'end a', 'end b']);
});

test('a failure rejects its own caller only; the queue goes on', async () => {
  const coordinator = new Coordinator(10);
  const failing = coordinator.run('a', async () => {
    throw new Error('boom');
  });
  const next = coordinator.run('a', async () => 'fine');
  await assert.rejects(failing, /boom/);
  assert.equal(await next, 'fine');
});

test('past the bound of active conversations new ones are refused with a retry hint; queued ones are not', async () => {
  const coordinator = new Coordinator(1);
  const long = coordinator.run('a', () => sleep(20));
  const sameConversation = coordinator.run('a', async () => 'queued');
  await assert.rejects(
    coordinator.run('b', async () => 'refused'),
    (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.kind, 'unavailable');
      assert.equal(error.details.retryAfterSeconds, 1);
      return true;
    },
  );
  assert.equal(coordinator.activeConversations, 1);
  await long;
  assert.equal(await sameConversation, 'queued');
  assert.equal(await coordinator.run('b', async () => 'now'), 'now');
  assert.equal(coordinator.activeConversations, 0);
});
