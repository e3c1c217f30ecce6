import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition, type SemanticProblem } from '../kinds.ts';
import { aliasRenamer, checkContext, closed, ContextSchema, stringEnum } from './common.ts';
import { isId } from '../../ids.ts';
import { normalizeEnvironment } from '../../runtime/deployments.ts';
import { cronProblem } from '../../schedules/schedule-times.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * A schedule (issue 18) sends a message to a deployed agent when a cron expression or a fixed interval says so,
 * through the same ordered conversation path as any message (`src/schedules/scheduler.ts`).
 */
export const ScheduleSchema = closed(
  {
    agentId: Type.String({ description: 'The agent that receives the message (USE access needed to write this).' }),
    environment: Type.Optional(
      Type.String({ description: 'Where the agent is deployed: production (default) or test.' }),
    ),
    cron: Type.Optional(
      Type.String({
        description: 'A cron expression: five fields (minute hour day month weekday), or six with seconds first.',
      }),
    ),
    timeZone: Type.Optional(
      Type.String({ description: 'IANA time zone the cron expression is read in (default UTC).' }),
    ),
    intervalSeconds: Type.Optional(
      Type.Integer({ minimum: 1, description: 'A heartbeat instead of cron: due every this many seconds.' }),
    ),
    message: Type.String({ description: 'The input sent on every run.' }),
    context: Type.Optional(ContextSchema),
    conversation: Type.Optional(
      stringEnum(
        ['new', 'persistent'] as const,
        'new (default): every run starts a conversation; persistent: every run continues one conversation (a new one once it ended).',
      ),
    ),
    userId: Type.Optional(Type.String({ description: "The conversations' user (default schedule-<schedule id>)." })),
    enabled: Type.Optional(Type.Boolean({ description: 'Disabled schedules do not run (default true).' })),
    missedRuns: Type.Optional(
      stringEnum(
        ['skip', 'catchUp'] as const,
        'A due time found later than svc.schedules.missed-after-seconds (every instance was down): skip (default) records it as SKIPPED, catchUp runs it once for all the runs missed.',
      ),
    ),
  },
  { description: 'A message sent to an agent on a cron schedule or a fixed interval.' },
);
export type Schedule = Static<typeof ScheduleSchema>;

export const scheduleKind: ResourceKindDefinition = {
  ...kindNamed('schedule'),
  schema: ScheduleSchema,
  renameAliases: aliasRenamer({}, ScheduleSchema),
  agentTargets: (body) =>
    isRecord(body) && typeof body.agentId === 'string' ? [{ path: '$.agentId', agentId: body.agentId }] : [],
  // Exported with the agent it messages; imported for the agent the import writes (it messages whichever version
  // is deployed, so the version is not bound).
  agentOwned: {
    ownerOf: (body) => (isRecord(body) && typeof body.agentId === 'string' ? body.agentId : undefined),
    bind: (body, agentId) => (isRecord(body) ? { ...body, agentId } : body),
  },
  checkSemantics: (body) => (isRecord(body) ? scheduleProblems(body as Schedule) : []),
};

function scheduleProblems(schedule: Schedule): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  if (!isId(schedule.agentId)) problems.push({ path: '$.agentId', message: 'agentId must be an agent id (24 hex).' });
  try {
    normalizeEnvironment(schedule.environment);
  } catch (error) {
    problems.push({ path: '$.environment', message: (error as Error).message });
  }
  if ((schedule.cron === undefined) === (schedule.intervalSeconds === undefined)) {
    problems.push({ path: '$', message: 'A schedule has either cron or intervalSeconds, not both and not neither.' });
  }
  if (schedule.cron !== undefined) {
    const problem = cronProblem(schedule.cron, schedule.timeZone ?? 'UTC');
    if (problem !== undefined) problems.push({ path: '$.cron', message: problem });
  } else if (schedule.timeZone !== undefined) {
    problems.push({ path: '$.timeZone', message: 'timeZone is read only with cron.' });
  }
  if (schedule.message.trim() === '') problems.push({ path: '$.message', message: 'message must not be empty.' });
  return [...problems, ...checkContext(schedule.context, '$.context')];
}
