/** Runs one autocannon measurement in this process (started by load.ts on the load core) and prints it as JSON. */
import { measure, type LoadSpec } from './measure.ts';

const [baseUrl, specJson] = process.argv.slice(2);
const measurement = await measure(baseUrl!, JSON.parse(specJson!) as LoadSpec);
process.stdout.write(`${JSON.stringify(measurement)}\n`);
