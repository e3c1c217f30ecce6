import { readFileSync } from 'node:fs';

/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux); undefined elsewhere. CPU time per
 * request is the bench's steadiest figure on a shared machine: unlike requests per second, it does not move when
 * another process takes the core for a while.
 */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
