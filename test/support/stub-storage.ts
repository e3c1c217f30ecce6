import type { Storage } from '../../src/storage/ports.ts';

/**
 * A storage for unit tests of code that uses only some of it: every store is an empty stub (calling one of its
 * methods fails) and the storage answers pings, refuses transactions and closes, unless `parts` says otherwise.
 */
export function stubStorage<T extends Partial<Storage>>(parts: T): Storage & T {
  return {
    type: 'sqlite',
    resources: {} as Storage['resources'],
    conversations: {} as Storage['conversations'],
    userProperties: {} as Storage['userProperties'],
    userMemories: {} as Storage['userMemories'],
    deployments: {} as Storage['deployments'],
    triggers: {} as Storage['triggers'],
    secrets: {} as Storage['secrets'],
    audit: {} as Storage['audit'],
    rateLimits: {} as Storage['rateLimits'],
    transcriptRuns: {} as Storage['transcriptRuns'],
    apiKeys: {} as Storage['apiKeys'],
    chatThreads: {} as Storage['chatThreads'],
    knowledge: {} as Storage['knowledge'],
    scheduleRuns: {} as Storage['scheduleRuns'],
    channelMessages: {} as Storage['channelMessages'],
    groupDiscussions: {} as Storage['groupDiscussions'],
    async ping() {},
    transaction: () => Promise.reject(new Error('this stub storage runs no transactions')),
    async close() {},
    ...parts,
  };
}
