import type { TranscriptRun } from '../src/transcripts/runs.ts';
import { readExport } from './archive.ts';
import { CliError, type Api } from './connection.ts';
import { writeFolder, type FileFormat } from './folder.ts';
import { inFolderTerms, planFolder, type Plan } from './plan.ts';

/** The commands that talk to the server (`validate` is offline, in validate.ts). */

export interface PullResult {
  readonly agentId: string;
  readonly agentVersion: number;
  readonly files: string[];
  readonly scrubbedSecrets: string[];
}

export async function pull(
  api: Api,
  agentId: string,
  folder: string,
  options: { version?: number | undefined; format: FileFormat },
): Promise<PullResult> {
  const query = options.version === undefined ? '' : `?agentVersion=${options.version}`;
  const exported = await api.request('POST', `/backup/export/${encodeURIComponent(agentId)}${query}`);
  const location = exported.headers.get('location');
  if (!location) throw new CliError('The server answered the export without a Location.');
  const zip = new Uint8Array(await (await api.request('GET', location, { accept: 'application/zip' })).arrayBuffer());
  const version = Number(/-(\d+)\.zip$/.exec(location)?.[1]);
  const pulled = readExport(zip);
  const files = await writeFolder(folder, pulled.resources, options.format);
  return { agentId, agentVersion: version, files, scrubbedSecrets: pulled.scrubbedSecrets };
}

export interface ApplyResult {
  readonly plan: Plan;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly deployment?: { environment: string; status: string; error?: string };
}

interface ImportAnswer {
  readonly agentId: string;
  readonly agentVersion: number;
}

/**
 * Plans, then imports the planned archive with the merge strategy: the server writes it in one storage
 * transaction (new versions, all or nothing). With `deploy`, deploys the new version and waits for READY.
 */
export async function apply(api: Api, folder: string, options: { deploy?: string | undefined }): Promise<ApplyResult> {
  const plan = await planFolder(api, folder);
  let agentId = plan.agent.serverId;
  let agentVersion = plan.agent.toVersion;
  if (plan.changed) {
    const imported = await inFolderTerms(plan.files, () =>
      api.json<ImportAnswer>('POST', '/backup/import?strategy=merge', { zip: plan.archive }),
    );
    ({ agentId, agentVersion } = imported);
  }
  if (options.deploy === undefined || agentId === undefined) return { plan, agentId: agentId!, agentVersion };
  const deployment = await api.json<{ status: string; error?: string }>(
    'POST',
    `/administration/${encodeURIComponent(options.deploy)}/deploy/${agentId}?version=${agentVersion}&waitForCompletion=true`,
  );
  return {
    plan,
    agentId,
    agentVersion,
    deployment: {
      environment: options.deploy,
      status: deployment.status,
      ...(deployment.error ? { error: deployment.error } : {}),
    },
  };
}

export interface TranscriptOutcome {
  readonly file: string;
  readonly name: string;
  readonly passed: boolean;
  /** Why the run could not replay at all. */
  readonly error?: string;
  readonly failures: { step: number; input: string; field: string; diff?: string }[];
}

/**
 * Runs every transcript of the folder against the agent version on the server, which must be the folder as it is
 * (a folder with changes not applied is refused: the run would test something else).
 */
export async function runTranscripts(
  api: Api,
  folder: string,
  options: { mode: string },
): Promise<{ agentId: string; agentVersion: number; transcripts: TranscriptOutcome[] }> {
  const plan = await planFolder(api, folder);
  if (plan.changed)
    throw new CliError('The folder has changes the server does not have yet; apply it first (see plan).');
  const agentId = plan.agent.serverId!;
  const agentVersion = plan.agent.toVersion;
  const files = new Map(plan.files.map((r) => [r.file, r]));
  const transcripts: TranscriptOutcome[] = [];
  for (const planned of plan.resources) {
    if (planned.kind !== 'transcript') continue;
    const run = await api.json<TranscriptRun>(
      'POST',
      `/transcriptstore/transcripts/${planned.serverId}/runs?version=${planned.toVersion}`,
      { json: { agentId, agentVersion, mode: options.mode } },
    );
    transcripts.push({
      file: planned.file,
      name: files.get(planned.file)?.name ?? '',
      passed: run.passed,
      ...(run.error ? { error: run.error } : {}),
      failures: run.steps
        .filter((step) => !step.passed)
        .flatMap((step) =>
          step.fields
            .filter((f) => !f.passed)
            .map((f) => ({ step: step.step, input: step.input, field: f.field, ...(f.diff ? { diff: f.diff } : {}) })),
        ),
    });
  }
  return { agentId, agentVersion, transcripts };
}
