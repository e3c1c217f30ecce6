import { Index } from 'usearch';
import { fakeEmbedding } from './test/support/fake-llm/embeddings.ts';
const N = Number(process.argv[2] ?? 20000), D = 256;
function seeded(seed: number) { let s = seed >>> 0; return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; }; }
const V = Array.from({ length: 5000 }, (_, i) => `term${i.toString(36)}`);
const words = (n: number, next: () => number) => Array.from({ length: n }, () => V[Math.floor(next() * V.length)]).join(' ');
const next = seeded(11);
const all = new Float32Array(N * D);
const random = process.argv[4] === 'random';
for (let i = 0; i < N; i++) { const v = random ? Array.from({length: D}, () => next() - 0.5) : fakeEmbedding(words(20, next), D); let n = Math.hypot(...v); for (let d = 0; d < D; d++) all[i * D + d] = v[d]! / n; }
const [quantization, ea, threads] = (process.argv[3] ?? 'f32,128,1').split(',');
const index = new Index({ dimensions: D, metric: 'cos' as any, quantization: quantization as any, connectivity: 16, expansion_add: Number(ea), expansion_search: 64, multi: false });
let cpu = process.cpuUsage(); let t = performance.now();
const B = 1024;
for (let s = 0; s < N; s += B) { const e = Math.min(N, s + B); const keys = new BigUint64Array(e - s); for (let i = s; i < e; i++) keys[i - s] = BigInt(i); index.add(keys, all.subarray(s * D, e * D), Number(threads)); }
const c = process.cpuUsage(cpu);
console.log(N, quantization, ea, threads, process.argv[4] ?? 'fake', 'build wall ms', (performance.now() - t).toFixed(0), 'cpu ms', ((c.user + c.system) / 1000).toFixed(0));
