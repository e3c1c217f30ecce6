import { parentPort, workerData } from 'node:worker_threads';
import { type BuildRequest, newHnsw } from './approximate-index.ts';

/** Builds an HNSW index off the main thread (see `approximate-index.ts`) and saves it where it was asked to. */

const { dimensions, vectors, path } = workerData as BuildRequest;
try {
  const index = await newHnsw(dimensions);
  const rows = vectors.length / dimensions;
  const keys = new BigUint64Array(rows);
  for (let row = 0; row < rows; row++) keys[row] = BigInt(row);
  index.add(keys, vectors, 1);
  index.save(path);
  parentPort!.postMessage({});
} catch (error) {
  parentPort!.postMessage({ error: (error as Error).message });
}
