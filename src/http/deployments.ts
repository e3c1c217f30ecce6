import { Type } from '@sinclair/typebox';
import { normalizeEnvironment, type DeploymentService } from '../runtime/deployments.ts';
import type { ResourceService } from '../resources/service.ts';
import type { TranscriptRunService } from '../transcripts/runs.ts';
import type { TypedApp } from './typed-app.ts';

/** Deployment of agent versions to environments (`/administration/...`) and the deployment store. */

const EnvironmentAgentParams = Type.Object({
  environment: Type.String({ description: 'production or test (restricted and unrestricted mean production)' }),
  agentId: Type.String(),
});

const DeploymentSchema = Type.Object(
  {
    environment: Type.String(),
    agentId: Type.String(),
    agentVersion: Type.Integer(),
    status: Type.Union([
      Type.Literal('NOT_FOUND'),
      Type.Literal('IN_PROGRESS'),
      Type.Literal('READY'),
      Type.Literal('ERROR'),
    ]),
    autoDeploy: Type.Boolean(),
    deployedOn: Type.Integer({ description: 'epoch milliseconds; 0 when not deployed' }),
    error: Type.Optional(Type.String({ description: 'why the deployment failed' })),
  },
  { title: 'Deployment' },
);

export async function deploymentRoutes(
  app: TypedApp,
  deps: { deployments: DeploymentService; resources: ResourceService; transcriptRuns: TranscriptRunService },
): Promise<void> {
  const { deployments, resources, transcriptRuns } = deps;
  const tags = ['deployment'];

  app.post(
    '/administration/:environment/deploy/:agentId',
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags,
        summary: 'Deploy an agent version (202; compiling runs in the background)',
        description:
          '404 at once when the agent version does not exist; a missing referenced resource or an unknown extension type turns the status into ERROR with the reason. With `gate`, the transcript suite runs against the version first (from its recordings): a version that fails it is not deployed (422, the failing steps in `failures`).',
        params: EnvironmentAgentParams,
        querystring: Type.Object(
          {
            version: Type.Optional(
              Type.Integer({ minimum: 1, description: 'agent version; the current version when absent' }),
            ),
            autoDeploy: Type.Boolean({ default: true, description: 'deploy again at start-up' }),
            waitForCompletion: Type.Boolean({
              default: false,
              description: 'answer 200 with the final status instead of 202',
            }),
            gate: Type.Optional(
              Type.String({ description: 'a transcript suite id the version must pass before it is deployed' }),
            ),
          },
          { additionalProperties: true },
        ),
        response: { 200: DeploymentSchema, 202: DeploymentSchema },
      },
    },
    async (request, reply) => {
      const { environment, agentId } = request.params;
      const { query } = request;
      const version = query.version ?? (await resources.currentVersion('agent', agentId));
      if (query.gate !== undefined) await transcriptRuns.gate(query.gate, agentId, version, request.caller);
      const { view, completion } = await deployments.deploy(
        normalizeEnvironment(environment),
        agentId,
        version,
        query.autoDeploy,
        request.caller,
      );
      if (query.waitForCompletion) return reply.code(200).send(await completion);
      return reply.code(202).send(view);
    },
  );

  app.post(
    '/administration/:environment/undeploy/:agentId',
    {
      config: { access: { roles: 'write', level: 'EDIT' } },
      schema: {
        tags,
        summary: 'Undeploy an agent version (its running conversations go on with the version they started with)',
        params: EnvironmentAgentParams,
        querystring: Type.Object({ version: Type.Integer({ minimum: 1 }) }, { additionalProperties: true }),
        response: { 202: Type.Object({ undeployed: Type.Boolean() }) },
      },
    },
    async (request, reply) => {
      const { environment, agentId } = request.params;
      const { version } = request.query;
      return reply.code(202).send({
        undeployed: await deployments.undeploy(normalizeEnvironment(environment), agentId, version, request.caller),
      });
    },
  );

  app.get(
    '/administration/:environment/deploymentstatus/:agentId',
    {
      config: { access: { roles: 'read', rule: 'only agents the caller sees' } },
      schema: {
        tags,
        summary: 'Deployment status: NOT_FOUND, IN_PROGRESS, ERROR or READY (format=text for the bare word)',
        params: EnvironmentAgentParams,
        querystring: Type.Object(
          {
            version: Type.Integer({ minimum: 1 }),
            format: Type.Union([Type.Literal('json'), Type.Literal('text')], { default: 'json' }),
          },
          { additionalProperties: true },
        ),
        response: {
          200: {
            description: 'The deployment; with format=text only its status word',
            content: {
              'application/json': { schema: DeploymentSchema },
              'text/plain': { schema: DeploymentSchema.properties.status },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { environment, agentId } = request.params;
      const { version, format } = request.query;
      const status = await deployments.statusFor(normalizeEnvironment(environment), agentId, version, request.caller);
      if (format === 'text') return reply.type('text/plain; charset=utf-8').send(status.status);
      return status;
    },
  );

  app.get(
    '/administration/:environment/deploymentstatus',
    {
      config: { access: { roles: 'read', rule: 'only agents the caller sees' } },
      schema: {
        tags,
        summary: 'Every deployment of an environment, newest first',
        params: Type.Object({ environment: Type.String() }),
        response: { 200: Type.Array(DeploymentSchema) },
      },
    },
    async (request) => deployments.listFor(request.caller, normalizeEnvironment(request.params.environment)),
  );

  app.get(
    '/administration/deploy/:agentId',
    {
      config: { access: { roles: 'read', rule: 'only agents the caller sees' } },
      schema: {
        tags,
        summary:
          'Deployment check of an agent across environments (for troubleshooting); 404 for an agent the caller cannot see',
        params: Type.Object({ agentId: Type.String() }),
        response: {
          200: Type.Object({
            agentId: Type.String(),
            environments: Type.Record(Type.String(), Type.Array(DeploymentSchema)),
          }),
        },
      },
    },
    async (request) => {
      const { agentId } = request.params;
      return { agentId, environments: await deployments.ofAgent(agentId, request.caller) };
    },
  );

  app.get(
    '/deploymentstore/deployments',
    {
      config: { access: { roles: 'read', rule: 'only agents the caller sees' } },
      schema: {
        tags,
        summary: 'Every deployment of every environment, newest first',
        response: { 200: Type.Array(DeploymentSchema) },
      },
    },
    async (request) => deployments.listFor(request.caller),
  );
}
