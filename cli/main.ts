#!/usr/bin/env node
import { styleText } from 'node:util';
import { Command, InvalidArgumentError, Option } from 'commander';
import { kindNamed } from '../src/resources/kinds.ts';
import { apply, pull, runTranscripts } from './commands.ts';
import { Api, CliError, resolveConnection } from './connection.ts';
import type { FieldChange } from './diff.ts';
import { FolderError, type FolderProblem, readFolder } from './folder.ts';
import type { Plan, PlannedChange } from './plan.ts';
import { planFolder } from './plan.ts';
import { folderProblems } from './validate.ts';

/**
 * svc-agents: keep agents in a folder under version control. Exit codes: 0 done (plan: no changes), 1 failed (bad
 * folder, server refused, transcripts failed), 2 plan has changes.
 */

const EXIT_FAILED = 1;
const EXIT_CHANGES = 2;

type Style = Parameters<typeof styleText>[0];
/** Colours only where stdout is a terminal (and NO_COLOR / FORCE_COLOR are honoured). */
const paint = (style: Style, text: string) => styleText(style, text, { stream: process.stdout });

const print = (line = '') => process.stdout.write(`${line}\n`);
const printJson = (value: unknown) => print(JSON.stringify(value, null, 2));

const positiveInteger = (value: string) => {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new InvalidArgumentError('must be a whole number from 1.');
  return number;
};

function connectionOptions(command: Command): Command {
  return command
    .option('--server <url>', 'service URL (env SVC_AGENTS_SERVER)')
    .option('--token <token>', 'bearer token (env SVC_AGENTS_TOKEN)')
    .option('--issuer <url>', 'OIDC issuer for the client-credentials grant (env SVC_AGENTS_ISSUER)')
    .option('--client-id <id>', 'OIDC client id (env SVC_AGENTS_CLIENT_ID)')
    .option('--client-secret <secret>', 'OIDC client secret (env SVC_AGENTS_CLIENT_SECRET)')
    .option('--scope <scope>', 'scope to ask the issuer for (env SVC_AGENTS_SCOPE)')
    .option('--config <file>', 'settings file (env SVC_AGENTS_CONFIG; default .svc-agents.yaml)')
    .option('--json', 'machine-readable output on stdout');
}

interface GlobalOptions {
  server?: string;
  token?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  config?: string;
  json?: boolean;
}

async function apiFrom(options: GlobalOptions): Promise<Api> {
  return new Api(await resolveConnection(options));
}

const shown = (value: unknown) => JSON.stringify(value);

function renderChange(change: FieldChange): string {
  if (!('before' in change)) return paint('green', `      + ${change.path}: ${shown(change.after)}`);
  if (!('after' in change)) return paint('red', `      - ${change.path}: ${shown(change.before)}`);
  return paint('yellow', `      ~ ${change.path}: ${shown(change.before)} -> ${shown(change.after)}`);
}

function renderResource(resource: PlannedChange): void {
  const label = `${kindNamed(resource.kind).title} ${resource.name ? `'${resource.name}' ` : ''}(${resource.file})`;
  if (resource.action === 'create') print(paint('green', `  + create ${label}: version 1`));
  else if (resource.action === 'unchanged')
    print(paint('dim', `    unchanged ${label}: version ${resource.fromVersion}`));
  else {
    const versions =
      resource.toVersion === resource.fromVersion
        ? `version ${resource.fromVersion} kept`
        : `version ${resource.fromVersion} -> ${resource.toVersion}`;
    print(paint('yellow', `  ~ update ${label}: ${versions}`));
    for (const change of resource.changes) print(renderChange(change));
  }
}

const planView = (plan: Plan) => ({
  changed: plan.changed,
  agent: {
    id: plan.agent.serverId ?? null,
    fromVersion: plan.agent.fromVersion ?? null,
    toVersion: plan.agent.toVersion,
  },
  resources: plan.resources.map(({ kind, file, name, action, serverId, fromVersion, toVersion, changes }) => ({
    kind,
    file,
    name,
    action,
    serverId: serverId ?? null,
    fromVersion: fromVersion ?? null,
    toVersion,
    changes,
  })),
});

function renderPlan(plan: Plan): void {
  for (const resource of plan.resources) renderResource(resource);
  const { agent } = plan;
  if (!plan.changed) print('No changes: the server holds what the folder says.');
  else if (agent.action === 'create') print(`Apply creates the agent (version 1).`);
  else print(`Apply makes agent ${agent.serverId} version ${agent.toVersion} (from ${agent.fromVersion}).`);
}

function fail(error: unknown, json: boolean | undefined): never {
  if (json) {
    printJson(
      error instanceof FolderError
        ? { error: 'invalid folder', problems: error.problems }
        : { error: (error as Error).message },
    );
  } else {
    process.stderr.write(`${paint('red', 'error:')} ${(error as Error).message}\n`);
  }
  process.exit(EXIT_FAILED);
}

/** Runs a command's action; a CliError or FolderError is a clean exit 1, anything else too, with its message. */
function action<A extends unknown[]>(run: (...args: A) => Promise<number>) {
  return async (...args: A) => {
    const command = args.at(-1) as Command;
    try {
      const code = await run(...args);
      process.exitCode = code;
    } catch (error) {
      if (!(error instanceof CliError || error instanceof FolderError))
        process.stderr.write(`${(error as Error).stack}\n`);
      fail(error, command.optsWithGlobals<GlobalOptions>().json);
    }
  };
}

export function program(): Command {
  const cli = new Command('svc-agents')
    .description('Keep agents in a folder under version control: pull, validate, plan, apply, test.')
    .showHelpAfterError()
    .configureOutput({ outputError: (text, write) => write(text) })
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_FAILED));

  connectionOptions(
    cli
      .command('pull')
      .description('write the agent, its workflows, every resource they use and its transcripts into a folder')
      .argument('<agentId>', 'the agent to pull')
      .argument('<folder>', 'the folder to write (resource files no longer used are removed)')
      .option('--version <n>', 'agent version (default: the current one)', positiveInteger)
      .addOption(new Option('--format <format>', 'file format').choices(['yaml', 'json']).default('yaml')),
  ).action(
    action(async (agentId: string, folder: string, _options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { version?: number; format: 'yaml' | 'json' }>();
      const result = await pull(await apiFrom(options), agentId, folder, options);
      if (options.json) printJson(result);
      else {
        print(
          `Pulled agent ${result.agentId} version ${result.agentVersion}: ${result.files.length} files in ${folder}.`,
        );
        for (const secret of result.scrubbedSecrets)
          process.stderr.write(
            `${paint('yellow', 'warning:')} a secret value was left out (${secret}); keep it in the vault and write \${vault:NAME} there.\n`,
          );
      }
      return 0;
    }),
  );

  cli
    .command('validate')
    .description('check the folder offline against the JSON Schemas the server publishes (bundled)')
    .argument('<folder>')
    .option('--json', 'machine-readable output on stdout')
    .action(
      action(async (folder: string, _options, command: Command) => {
        const { json } = command.optsWithGlobals<GlobalOptions>();
        let checked: { files: number; problems: readonly FolderProblem[] };
        try {
          const resources = await readFolder(folder);
          checked = { files: resources.length, problems: folderProblems(resources) };
        } catch (error) {
          if (!(error instanceof FolderError)) throw error;
          checked = { files: 0, problems: error.problems };
        }
        const { files, problems } = checked;
        if (json) printJson({ valid: problems.length === 0, files, problems });
        else if (problems.length === 0) print(`${files} files are valid.`);
        else for (const p of problems) print(`${p.file}:${p.line}: ${paint('red', 'error')} ${p.message}`);
        return problems.length === 0 ? 0 : EXIT_FAILED;
      }),
    );

  connectionOptions(
    cli
      .command('plan')
      .description('show what apply would change on the server; exit code 2 when there are changes')
      .argument('<folder>'),
  ).action(
    action(async (folder: string, _options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      const plan = await planFolder(await apiFrom(options), folder);
      if (options.json) printJson(planView(plan));
      else renderPlan(plan);
      return plan.changed ? EXIT_CHANGES : 0;
    }),
  );

  connectionOptions(
    cli
      .command('apply')
      .description('make the server hold the folder: new versions, all or nothing; optionally deploy')
      .argument('<folder>')
      .option('--deploy <environment>', 'deploy the applied agent version there and wait until it is READY'),
  ).action(
    action(async (folder: string, _options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { deploy?: string }>();
      const result = await apply(await apiFrom(options), folder, options);
      const deployFailed = result.deployment !== undefined && result.deployment.status !== 'READY';
      if (options.json)
        printJson({
          ...planView(result.plan),
          agentId: result.agentId,
          agentVersion: result.agentVersion,
          deployment: result.deployment ?? null,
        });
      else {
        renderPlan(result.plan);
        if (result.plan.changed)
          print(paint('green', `Applied: agent ${result.agentId} version ${result.agentVersion}.`));
        if (result.deployment)
          print(
            deployFailed
              ? paint(
                  'red',
                  `Deployment to ${result.deployment.environment} ended ${result.deployment.status}: ${result.deployment.error ?? ''}`,
                )
              : paint('green', `Deployed to ${result.deployment.environment}: READY.`),
          );
      }
      return deployFailed ? EXIT_FAILED : 0;
    }),
  );

  connectionOptions(
    cli
      .command('test')
      .description("run the folder's transcripts against the applied agent version; exit code 1 when one fails")
      .argument('<folder>')
      .addOption(
        new Option('--mode <mode>', 'recorded: external calls from the recordings; live-llm; live')
          .choices(['recorded', 'live-llm', 'live'])
          .default('recorded'),
      ),
  ).action(
    action(async (folder: string, _options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { mode: string }>();
      const result = await runTranscripts(await apiFrom(options), folder, options);
      const passed = result.transcripts.every((t) => t.passed);
      if (options.json) printJson({ ...result, passed });
      else {
        for (const t of result.transcripts) {
          print(`${t.passed ? paint('green', 'pass') : paint('red', 'FAIL')} ${t.name || t.file}`);
          if (t.error) print(`      ${t.error}`);
          for (const f of t.failures) {
            print(`      step ${f.step} (${JSON.stringify(f.input)}): ${f.field}`);
            if (f.diff) for (const line of f.diff.split('\n')) print(`        ${line}`);
          }
        }
        print(
          `${result.transcripts.filter((t) => t.passed).length} of ${result.transcripts.length} transcripts passed against agent ${result.agentId} version ${result.agentVersion}.`,
        );
      }
      return passed ? 0 : EXIT_FAILED;
    }),
  );
  return cli;
}

await program().parseAsync();
