import type { Settings } from '../../settings.ts';
import type { DeployedAgent } from './agent-directory.ts';

/**
 * Agent cards in the A2A v0.3 JSON shape (`protocolVersion` 0.3.0, JSON-RPC transport at `url`), plus the older
 * `authentication` block that names the token endpoint an outside peer should use. `@a2a-js/sdk` clients with
 * `legacyCompat` enabled read these cards and talk to `url` with `message/send`, `tasks/get`, `tasks/cancel`.
 */

export const A2A_PROTOCOL_VERSION = '0.3.0';
const PROVIDER = 'Conversational agent orchestration service';
/** The OIDC token path of Keycloak-style issuers (`<issuer>/protocol/openid-connect/token`). */
export const OIDC_TOKEN_PATH = '/protocol/openid-connect/token';

export interface AgentSkill {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
}

export interface AgentCard {
  readonly protocolVersion: string;
  readonly name: string;
  readonly description: string;
  readonly url: string;
  readonly preferredTransport: 'JSONRPC';
  readonly provider: { readonly organization: string; readonly url: string };
  readonly version: string;
  readonly capabilities: {
    readonly streaming: false;
    readonly pushNotifications: false;
    readonly stateTransitionHistory: false;
  };
  readonly defaultInputModes: readonly string[];
  readonly defaultOutputModes: readonly string[];
  readonly skills: readonly AgentSkill[];
  readonly authentication?: { readonly schemes: readonly string[]; readonly credentials: string };
  readonly securitySchemes?: Record<string, unknown>;
  readonly security?: readonly Record<string, readonly string[]>[];
}

/**
 * The token endpoint advertised in cards: `svc.a2a.public-token-endpoint` verbatim; else the identity provider's
 * public URL (`svc.oidc.public-url`), else its issuer URL (`svc.oidc.auth-server-url`), each taken as a
 * Keycloak-style realm URL with `/protocol/openid-connect/token` appended (unless it already ends so);
 * undefined when none is set.
 */
export function tokenEndpoint(
  settings: Pick<Settings, 'svc.a2a.public-token-endpoint' | 'svc.oidc.public-url' | 'svc.oidc.auth-server-url'>,
): string | undefined {
  const explicit = settings['svc.a2a.public-token-endpoint'];
  if (explicit) return explicit;
  const issuer = settings['svc.oidc.public-url'] || settings['svc.oidc.auth-server-url'];
  if (!issuer) return undefined;
  const base = issuer.replace(/\/+$/, '');
  return base.endsWith(OIDC_TOKEN_PATH) ? base : base + OIDC_TOKEN_PATH;
}

const DEFAULT_SKILL: AgentSkill = {
  id: 'chat',
  name: 'Conversational AI',
  description: 'General conversational agent',
  tags: ['chat', 'ai'],
};

/** One skill per `a2aSkills` entry (id: lower case, blanks as `-`); a single `chat` skill when none is listed. */
export function skillsOf(agent: DeployedAgent): AgentSkill[] {
  const names = (agent.config.a2aSkills ?? []).map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) return [DEFAULT_SKILL];
  return names.map((name) => {
    const id = name.toLowerCase().replace(/\s+/g, '-');
    return { id, name, description: `Skill: ${name}`, tags: [id] };
  });
}

/** The path of an agent's JSON-RPC endpoint (its card's `url` below the public base). */
export const agentPath = (agentId: string) => `/a2a/agents/${agentId}`;

export function agentCard(agent: DeployedAgent, publicBase: string, token: string | undefined): AgentCard {
  const card: AgentCard = {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: agent.name || `Agent ${agent.id}`,
    description: agent.description || 'Conversational agent',
    url: publicBase + agentPath(agent.id),
    preferredTransport: 'JSONRPC',
    provider: { organization: PROVIDER, url: publicBase },
    version: String(agent.deployedVersion),
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['text', 'text/plain'],
    defaultOutputModes: ['text', 'text/plain'],
    skills: skillsOf(agent),
  };
  if (token === undefined) return card;
  return {
    ...card,
    authentication: { schemes: ['Bearer'], credentials: token },
    securitySchemes: { oauth2: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: token, scopes: {} } } } },
    security: [{ oauth2: [] }],
  };
}

/** A capability entry of the discovery endpoint: which agent offers which skill. */
export interface CapabilityMatch {
  readonly agentId: string;
  readonly skill: string;
  readonly confidence: 'medium';
  readonly attributes: Readonly<Record<string, unknown>>;
}

/**
 * Capabilities of the exposed agents, one entry per (agent, skill); `skill` filters by skill id or name
 * (case-insensitive), `strategy=highest_confidence` keeps the best entry only (every skill is `medium`, so the
 * oldest agent's).
 */
export function capabilities(
  agents: readonly DeployedAgent[],
  query: { skill?: string | undefined; strategy?: string | undefined },
): CapabilityMatch[] {
  const wanted = query.skill?.trim().toLowerCase();
  const matches = agents.flatMap((agent) =>
    skillsOf(agent)
      .filter((skill) => !wanted || skill.id === wanted || skill.name.toLowerCase() === wanted)
      .map((skill) => ({
        agentId: agent.id,
        skill: skill.name,
        confidence: 'medium' as const,
        attributes: { skillId: skill.id, agentName: agent.name },
      })),
  );
  return query.strategy === 'highest_confidence' ? matches.slice(0, 1) : matches;
}

/** The distinct skill names of the exposed agents, sorted. */
export function skillNames(agents: readonly DeployedAgent[]): string[] {
  return [...new Set(agents.flatMap((agent) => skillsOf(agent).map((skill) => skill.name)))].sort();
}
