import { Type } from '@sinclair/typebox';
import { kindNamed } from '../resources/kinds.ts';
import type { Scheduler } from '../schedules/scheduler.ts';
import { RUN_OUTCOMES } from '../storage/schedule-run-ports.ts';
import type { TypedApp } from './typed-app.ts';

/** The run history of schedules (issue 18); the schedules themselves are a versioned store (`stores.ts`). */

const ScheduleRunSchema = Type.Object(
  {
    id: Type.String(),
    scheduleId: Type.String(),
    dueOn: Type.Number({ description: 'the due time the run is for (epoch ms)' }),
    startedOn: Type.Number(),
    finishedOn: Type.Optional(Type.Number()),
    outcome: Type.Union(
      RUN_OUTCOMES.map((outcome) => Type.Literal(outcome)),
      {
        description:
          'RUNNING; OK (the message was answered); ERROR (the turn ended in ERROR); FAILED (no conversation could take it: the agent is not deployed, ...); SKIPPED (missed while every instance was down, missedRuns skip)',
      },
    ),
    conversationId: Type.Optional(Type.String()),
    detail: Type.Optional(Type.String({ description: 'why it failed or was skipped' })),
  },
  { title: 'ScheduleRun' },
);

const ScheduleHistorySchema = Type.Object(
  {
    scheduleId: Type.String(),
    enabled: Type.Boolean(),
    nextRunOn: Type.Optional(Type.Number({ description: 'the next due time (epoch ms); absent while disabled' })),
    runs: Type.Array(ScheduleRunSchema, { description: 'latest due time first, at most 100' }),
  },
  { title: 'ScheduleHistory' },
);

export async function scheduleRoutes(app: TypedApp, deps: { scheduler: Scheduler }): Promise<void> {
  app.get(
    `${kindNamed('schedule').storePath}/:id/runs`,
    {
      config: { access: { roles: 'read', level: 'USE' } },
      schema: {
        tags: ['schedulestore'],
        summary: "A schedule's runs (time, conversation, outcome) and its next due time",
        params: Type.Object({ id: Type.String() }),
        response: { 200: ScheduleHistorySchema },
      },
    },
    async (request) => deps.scheduler.history(request.params.id, request.caller),
  );
}
