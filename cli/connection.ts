import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { isRecord } from '../src/shared/json.ts';

/**
 * Where the server is and how to authenticate: flags win over the environment, which wins over the config file
 * (`--config`, `SVC_AGENTS_CONFIG`, else `.svc-agents.yaml` in the working directory when it exists). A bearer
 * token is sent as it is; a client id and secret with an issuer get a token by the OIDC client-credentials grant.
 */

export interface ConnectionSettings {
  readonly server?: string | undefined;
  readonly token?: string | undefined;
  readonly issuer?: string | undefined;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  readonly scope?: string | undefined;
}

const SETTING_NAMES = ['server', 'token', 'issuer', 'clientId', 'clientSecret', 'scope'] as const;
const ENVIRONMENT: Record<(typeof SETTING_NAMES)[number], string> = {
  server: 'SVC_AGENTS_SERVER',
  token: 'SVC_AGENTS_TOKEN',
  issuer: 'SVC_AGENTS_ISSUER',
  clientId: 'SVC_AGENTS_CLIENT_ID',
  clientSecret: 'SVC_AGENTS_CLIENT_SECRET',
  scope: 'SVC_AGENTS_SCOPE',
};
const DEFAULT_CONFIG_FILE = '.svc-agents.yaml';

export class CliError extends Error {
  /** The problem body the server answered, when it answered one. */
  readonly problem: Record<string, unknown> | undefined;
  constructor(message: string, problem?: Record<string, unknown>) {
    super(message);
    this.problem = problem;
  }
}

async function configFile(path: string | undefined): Promise<ConnectionSettings> {
  const chosen = path ?? process.env.SVC_AGENTS_CONFIG;
  let text: string;
  try {
    text = await readFile(chosen ?? DEFAULT_CONFIG_FILE, 'utf8');
  } catch (error) {
    if (chosen === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`Cannot read the config file ${chosen}: ${(error as Error).message}`);
  }
  const value: unknown = parse(text);
  if (!isRecord(value)) throw new CliError(`The config file ${chosen ?? DEFAULT_CONFIG_FILE} must hold a mapping.`);
  const unknown = Object.keys(value).filter((key) => !(SETTING_NAMES as readonly string[]).includes(key));
  if (unknown.length > 0)
    throw new CliError(
      `The config file ${chosen ?? DEFAULT_CONFIG_FILE} holds unknown settings (${unknown.join(', ')}); known are ${SETTING_NAMES.join(', ')}.`,
    );
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, String(v)]));
}

export async function resolveConnection(
  flags: ConnectionSettings & { config?: string | undefined },
): Promise<Required<Pick<ConnectionSettings, 'server'>> & ConnectionSettings> {
  const file = await configFile(flags.config);
  const pick = (name: (typeof SETTING_NAMES)[number]) => flags[name] ?? process.env[ENVIRONMENT[name]] ?? file[name];
  const settings = Object.fromEntries(SETTING_NAMES.map((name) => [name, pick(name)])) as ConnectionSettings;
  if (!settings.server)
    throw new CliError('No server: give --server <url>, set SVC_AGENTS_SERVER, or put server: in .svc-agents.yaml.');
  if (settings.clientId !== undefined && (settings.clientSecret === undefined || settings.issuer === undefined))
    throw new CliError('A client id needs a client secret and an issuer (--client-secret, --issuer).');
  return { ...settings, server: settings.server.replace(/\/+$/, '') };
}

/** A problem body's text (or the start of whatever the server answered) and the problem itself. */
async function reasonOf(response: Response): Promise<{ reason: string; problem?: Record<string, unknown> }> {
  const text = await response.text();
  try {
    const problem: unknown = JSON.parse(text);
    if (isRecord(problem) && (problem.detail || problem.title))
      return { reason: String(problem.detail ?? problem.title), problem };
  } catch {}
  return { reason: text.slice(0, 300) || response.statusText };
}

async function clientCredentialsToken(settings: ConnectionSettings): Promise<string> {
  const discovery = await fetch(`${settings.issuer!.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  if (!discovery.ok)
    throw new CliError(`The issuer ${settings.issuer} answered ${discovery.status} to the discovery request.`);
  const { token_endpoint: tokenEndpoint } = (await discovery.json()) as { token_endpoint?: string };
  if (!tokenEndpoint) throw new CliError(`The issuer ${settings.issuer} publishes no token endpoint.`);
  const basic = Buffer.from(
    `${encodeURIComponent(settings.clientId!)}:${encodeURIComponent(settings.clientSecret!)}`,
  ).toString('base64');
  const response = await fetch(tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      ...(settings.scope ? { scope: settings.scope } : {}),
    }).toString(),
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; error_description?: string };
  if (!response.ok || !body.access_token)
    throw new CliError(
      `The issuer refused a token for client ${settings.clientId} (${response.status}${body.error_description ? `: ${body.error_description}` : ''}).`,
    );
  return body.access_token;
}

export interface RequestOptions {
  readonly json?: unknown;
  readonly zip?: Uint8Array;
  readonly accept?: string;
  /** Statuses answered instead of thrown. */
  readonly allow?: readonly number[];
}

/** The service's REST API as the CLI uses it; any answer other than 2xx (or an allowed status) is a CliError. */
export class Api {
  readonly server: string;
  readonly #settings: ConnectionSettings;
  #token: Promise<string | undefined> | undefined;

  constructor(settings: ConnectionSettings & { server: string }) {
    this.server = settings.server;
    this.#settings = settings;
  }

  #authorization(): Promise<string | undefined> {
    this.#token ??=
      this.#settings.token !== undefined
        ? Promise.resolve(this.#settings.token)
        : this.#settings.clientId !== undefined
          ? clientCredentialsToken(this.#settings)
          : Promise.resolve(undefined);
    return this.#token;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const token = await this.#authorization();
    const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | Uint8Array | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.zip) {
      headers['content-type'] = 'application/zip';
      body = options.zip;
    }
    let response: Response;
    try {
      response = await fetch(this.server + path, { method, headers, body });
    } catch (error) {
      throw new CliError(
        `Cannot reach ${this.server}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`,
      );
    }
    if (!response.ok && !options.allow?.includes(response.status)) {
      const { reason, problem } = await reasonOf(response);
      throw new CliError(`${method} ${path} answered ${response.status}: ${reason}`, problem);
    }
    return response;
  }

  async json<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return (await (await this.request(method, path, options)).json()) as T;
  }
}
