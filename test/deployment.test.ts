import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { environmentName, settingDefinitions } from '../src/settings.ts';
import { startCommand } from '../scripts/start-command.ts';

/**
 * The deployment files (issue 19, item 7), checked as far as this machine can: there is no Docker engine and no
 * cluster here, so the images are not built and nothing is started. The Dockerfile's stages, user and sources,
 * the compose file's services and health checks, and the Kubernetes manifests (rendered by `kubectl kustomize`
 * when kubectl is installed) are read and held against the service's own settings and endpoints.
 */

const root = new URL('..', import.meta.url).pathname;
const read = (path: string) => readFileSync(root + path, 'utf8');
const settingVariables = new Set(Object.keys(settingDefinitions).map(environmentName));
const defaultPort = String(settingDefinitions['svc.http.port'].defaultValue);

/** Every SVC_* name is the environment form of a setting (an unknown one would be ignored by the service). */
function assertSettingVariables(names: Iterable<string>, where: string): void {
  for (const name of names) {
    if (!name.startsWith('SVC_')) continue;
    assert.ok(settingVariables.has(name), `${where}: ${name} is the environment variable of no setting`);
  }
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: string[][] = [];
  for (const line of instructions) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  const final = stages.at(-1)!;

  it('has several stages, the last on Node 24', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    const image = /^ARG NODE_IMAGE=(\S+)/m.exec(dockerfile)?.[1];
    assert.match(image ?? '', /^node:24[-.]/);
    for (const stage of stages) assert.match(stage[0]!, /^FROM \$\{NODE_IMAGE\}/);
  });

  it('runs as a non-root user', () => {
    const user = final.filter((line) => /^USER\s/i.test(line)).at(-1);
    assert.ok(user, 'the final stage sets a USER');
    assert.doesNotMatch(user, /^USER\s+(root|0)(:|\s*$)/);
  });

  it('copies only what exists, and builds the manager into the image', () => {
    for (const line of instructions.filter((line) => /^COPY\s/i.test(line) && !/--from=/.test(line))) {
      const sources = line.split(/\s+/).slice(1, -1);
      for (const source of sources) assert.ok(existsSync(root + source), `${line}: ${source} exists`);
    }
    assert.ok(final.some((line) => /^COPY --from=build \/build\/web\/dist \.\/web\/dist$/.test(line)));
    assert.ok(
      stages.some((stage) => stage.includes('RUN npm run build:web')),
      'a stage builds the manager',
    );
    const packageJson = JSON.parse(read('package.json'));
    assert.ok(packageJson.scripts['build:web'], 'the build:web script exists');
    assert.match(read('.dockerignore'), /^node_modules$/m);
  });

  it('starts the service as `npm start` does, exposes its port and checks its readiness', () => {
    const { nodeOptions, script } = startCommand();
    assert.equal(final.at(-1), `CMD ${JSON.stringify(['node', ...nodeOptions, script]).replaceAll('","', '", "')}`);
    assert.deepEqual(nodeOptions, ['--v8-pool-size=1'], 'one V8 helper thread (README, Performance)');
    assert.ok(final.includes(`EXPOSE ${defaultPort}`));
    assert.ok(final.some((line) => line.startsWith('HEALTHCHECK') && line.includes('/q/health/ready')));
    const variables = final
      .filter((line) => line.startsWith('ENV '))
      .flatMap((line) => [...line.matchAll(/(\w+)=/g)].map((match) => match[1]!));
    assertSettingVariables(variables, 'Dockerfile ENV');
  });
});

describe('compose file', () => {
  const compose = parse(read('deploy/compose/compose.yaml'), { merge: true });
  const instances = Object.entries<any>(compose.services).filter(([, service]) => service.build !== undefined);

  it('runs PostgreSQL, two instances of the service and a proxy', () => {
    assert.match(compose.services.postgres.image, /^postgres:/);
    assert.equal(instances.length, 2);
    assert.match(compose.services.proxy.image, /^nginx:/);
    assert.ok(compose.services.proxy.ports.length > 0, 'the proxy publishes a port');
  });

  it('the instances use PostgreSQL, start after it is healthy, and check their own readiness', () => {
    assert.ok(compose.services.postgres.healthcheck.test.includes('pg_isready'));
    for (const [name, service] of instances) {
      assert.equal(service.environment.SVC_DATASTORE_TYPE, 'postgres', name);
      assert.match(service.environment.SVC_DATASTORE_POSTGRES_URL, /@postgres:5432\//, name);
      assert.equal(service.depends_on.postgres.condition, 'service_healthy', name);
      assert.ok(service.healthcheck.test.join(' ').includes('/q/health/ready'), name);
      assertSettingVariables(Object.keys(service.environment), `compose ${name}`);
    }
  });

  it("the proxy's upstream is the two instances on the service's port", () => {
    const nginx = read('deploy/compose/nginx.conf');
    const port = instances[0]![1].environment.SVC_HTTP_PORT;
    const upstream = [...nginx.matchAll(/^\s*server\s+([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`);
    assert.deepEqual(upstream.sort(), instances.map(([name]) => `${name}:${port}`).sort());
    assert.match(nginx, /proxy_buffering off;/, 'streamed answers are not buffered');
  });
});

describe('Kubernetes manifests', () => {
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

  /** The overlay's resources: rendered by `kubectl kustomize`, or (without kubectl) the files the base lists. */
  function render(overlay: string): any[] {
    const folder = `${root}deploy/kubernetes/${overlay}`;
    if (kubectl) {
      const output = execFileSync('kubectl', ['kustomize', folder], { encoding: 'utf8' });
      return parseAllDocuments(output).map((document) => document.toJS());
    }
    const kustomization = parse(readFileSync(`${folder}/kustomization.yaml`, 'utf8'));
    return kustomization.resources.flatMap((resource: string) =>
      resource.startsWith('..')
        ? render(`${overlay}/${resource}`.replace(/[^/]+\/\.\.\//g, ''))
        : parseAllDocuments(readFileSync(`${folder}/${resource}`, 'utf8')).map((document) => document.toJS()),
    );
  }

  const base = render('base');
  const byKind = (resources: any[], kind: string) => resources.filter((resource) => resource.kind === kind);

  it(`renders${kubectl ? ' with kubectl kustomize' : ' (kubectl missing: the listed files are read)'}: the expected kinds`, () => {
    assert.deepEqual(base.map((resource) => resource.kind).sort(), [
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'Secret',
      'Service',
    ]);
    assert.deepEqual(
      render('overlays/ingress')
        .map((resource) => resource.kind)
        .sort(),
      ['ConfigMap', 'Deployment', 'Ingress', 'PodDisruptionBudget', 'Secret', 'Service'],
    );
  });

  it('several replicas, probes on the health endpoints at the port the settings name, not as root', () => {
    const [deployment] = byKind(base, 'Deployment');
    const [settings] = byKind(base, 'ConfigMap');
    assert.ok(deployment.spec.replicas > 1);
    const container = deployment.spec.template.spec.containers[0];
    const http = container.ports.find((port: { name: string }) => port.name === 'http');
    assert.equal(String(http.containerPort), settings.data.SVC_HTTP_PORT);
    assert.equal(container.readinessProbe.httpGet.path, '/q/health/ready');
    assert.equal(container.livenessProbe.httpGet.path, '/q/health/live');
    for (const probe of [container.readinessProbe, container.livenessProbe]) assert.equal(probe.httpGet.port, 'http');
    assert.equal(deployment.spec.template.spec.securityContext.runAsNonRoot, true);
    assert.ok(
      deployment.spec.template.spec.terminationGracePeriodSeconds >
        Number(settings.data.SVC_SHUTDOWN_DRAIN_TIMEOUT_SECONDS),
      'the grace period outlasts the drain',
    );
    assert.notEqual(deployment.spec.template.spec.securityContext.runAsUser, 0);
    if (kubectl) {
      const labels = deployment.spec.template.metadata.labels;
      for (const [key, value] of Object.entries(deployment.spec.selector.matchLabels)) assert.equal(labels[key], value);
      const [service] = byKind(base, 'Service');
      assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
      const [budget] = byKind(base, 'PodDisruptionBudget');
      assert.deepEqual(budget.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
    }
  });

  it('settings come from the ConfigMap, credentials from the Secret, all of them settings of the service', () => {
    const [deployment] = byKind(base, 'Deployment');
    const [settings] = byKind(base, 'ConfigMap');
    const [credentials] = byKind(base, 'Secret');
    const sources = deployment.spec.template.spec.containers[0].envFrom;
    assert.deepEqual(sources, [
      { configMapRef: { name: settings.metadata.name } },
      { secretRef: { name: credentials.metadata.name } },
    ]);
    assertSettingVariables(Object.keys(settings.data), 'ConfigMap');
    assertSettingVariables(Object.keys(credentials.stringData), 'Secret');
    for (const name of Object.keys(credentials.stringData))
      assert.ok(
        (settingDefinitions as Record<string, { secret?: boolean }>)[
          Object.keys(settingDefinitions).find((setting) => environmentName(setting) === name)!
        ]?.secret || name === 'SVC_DATASTORE_POSTGRES_URL',
        `${name} is a credential`,
      );
    for (const name of Object.keys(settings.data))
      assert.ok(!/MASTER_KEY|POSTGRES_URL|PASSWORD|TOKEN/.test(name), `${name} belongs in the Secret`);
  });
});
