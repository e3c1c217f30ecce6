import type { ConversationService } from '../runtime/conversations.ts';
import { snapshot, type ConversationSnapshot } from '../runtime/snapshot.ts';
import type { UserPropertyStore } from '../storage/runtime-ports.ts';
import type { UserMemoryEntry } from '../storage/user-memory-ports.ts';
import type { UserMemoryService } from './service.ts';

/**
 * Everything the service keeps about one user, exported or erased in one call each (GDPR access and erasure):
 * the user's memory entries, long-term properties and conversations (every step). The audit ledger is write-once
 * and keeps its entries (they name conversations, not their content's owner); see the README.
 */

export interface UserDataExport {
  readonly userId: string;
  /** Epoch milliseconds. */
  readonly exportedAt: number;
  readonly memories: readonly UserMemoryEntry[];
  readonly longTermProperties: Readonly<Record<string, unknown>>;
  readonly conversations: ReadonlyArray<ConversationSnapshot & { createdOn: number; lastModifiedOn: number }>;
}

export interface UserDataErasure {
  readonly userId: string;
  readonly memories: number;
  readonly longTermProperties: number;
  readonly conversations: number;
}

const PAGE = 200;

export class UserDataService {
  readonly #memories: UserMemoryService;
  readonly #properties: UserPropertyStore;
  readonly #conversations: ConversationService;
  readonly #clock: () => number;

  constructor(options: {
    memories: UserMemoryService;
    properties: UserPropertyStore;
    conversations: ConversationService;
    clock?: (() => number) | undefined;
  }) {
    this.#memories = options.memories;
    this.#properties = options.properties;
    this.#conversations = options.conversations;
    this.#clock = options.clock ?? Date.now;
  }

  async export(userId: string): Promise<UserDataExport> {
    const properties = await this.#properties.load(userId);
    const conversations: Array<ConversationSnapshot & { createdOn: number; lastModifiedOn: number }> = [];
    for (let index = 0; ; index++) {
      const rows = await this.#conversations.list({ userId, index, limit: PAGE });
      for (const row of rows) {
        const conversation = await this.#conversations.get(row.id).catch(() => undefined);
        if (conversation === undefined) continue; // deleted meanwhile
        conversations.push({
          ...snapshot(conversation, { returnDetailed: true, returnCurrentStepOnly: false }),
          createdOn: conversation.createdOn,
          lastModifiedOn: conversation.lastModifiedOn,
        });
      }
      if (rows.length < PAGE) break;
    }
    return {
      userId,
      exportedAt: this.#clock(),
      memories: await this.#memories.list(userId),
      longTermProperties: Object.fromEntries([...properties].map(([name, json]) => [name, JSON.parse(json)])),
      conversations,
    };
  }

  async erase(userId: string): Promise<UserDataErasure> {
    return {
      userId,
      memories: await this.#memories.deleteAll(userId),
      longTermProperties: await this.#properties.deleteAll(userId),
      conversations: await this.#conversations.deleteOfUser(userId),
    };
  }
}
