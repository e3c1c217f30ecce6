import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { openStorage } from '../../src/storage/open.ts';
import type { Storage } from '../../src/storage/ports.ts';
import { createTestDatabase } from './postgres.ts';

/** A store of its own for one contract suite: a sqlite file in a temporary folder, or a fresh PostgreSQL database. */
export interface StorageTarget {
  /** Opens the same database on every call. */
  open(): Promise<Storage>;
  cleanup(): Promise<void>;
}

export const storageTargets: Readonly<Record<'sqlite' | 'postgres', () => Promise<StorageTarget>>> = {
  async sqlite() {
    const dir = await mkdtemp(join(tmpdir(), 'svc-storage-'));
    const path = join(dir, 'store.db');
    return {
      open: () => openStorage({ type: 'sqlite', path }),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  },
  async postgres() {
    const database = await createTestDatabase();
    return { open: () => openStorage({ type: 'postgres', url: database.url }), cleanup: () => database.drop() };
  },
};

/**
 * Inside a `describe`: opens the target before the tests and closes and removes it after them. `storage()` is the
 * open storage, `reopen()` closes it and opens the same database again, `target()` opens further connections.
 */
export function useStorage(setup: () => Promise<StorageTarget>): {
  storage: () => Storage;
  reopen: () => Promise<void>;
  target: () => StorageTarget;
} {
  let target: StorageTarget | undefined;
  let storage: Storage | undefined;
  before(async () => {
    target = await setup();
    storage = await target.open();
  });
  after(async () => {
    await storage?.close();
    await target?.cleanup();
  });
  return {
    storage: () => storage!,
    reopen: async () => {
      await storage!.close();
      storage = await target!.open();
    },
    target: () => target!,
  };
}
