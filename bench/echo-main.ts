/** The bench's echo server in a process of its own (see echo.ts), on the port given in BENCH_PORT. */
import { startEchoServer } from './echo.ts';

const echo = await startEchoServer(Number(process.env.BENCH_PORT));
process.once('SIGTERM', () => void echo.close().then(() => process.exit(0)));
