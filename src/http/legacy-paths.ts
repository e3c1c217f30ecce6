import { resourceKinds } from '../resources/kinds.ts';

/**
 * Upstream clients use other paths for the same endpoints. Like upstream, the first matching prefix is replaced
 * before routing (case-sensitive), so every endpoint has one route and one handler.
 */
const rewrites: ReadonlyArray<readonly [legacy: string, current: string]> = [
  ...resourceKinds.flatMap((kind) => kind.legacyStorePaths.map((legacy) => [legacy, kind.storePath] as const)),
  ['/langchain/tools', '/llm/tools'],
  ['/AgentTriggerStore/agenttriggers', '/bottriggerstore/bottriggers'],
  ['/agents/managed', '/managedbots'],
];

export function rewriteLegacyPath(url: string): string {
  for (const [legacy, current] of rewrites) {
    if (url.startsWith(legacy) && (url.length === legacy.length || '/?'.includes(url[legacy.length]!))) {
      return current + url.slice(legacy.length);
    }
  }
  return url;
}
