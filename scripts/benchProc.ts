/**
 * What the benchmark reads of the processes it measures, from Linux's /proc: resident memory and CPU time of one
 * process, and the CPU time of a PostgreSQL server (the postmaster and every process it started).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): index 0 is field 3, the state. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime (fields 14 and 15) of a process. */
const ownTicks = (fields: string[]) => Number(fields[11]) + Number(fields[12]);
/** cutime + cstime (fields 16 and 17): the CPU time of the children it has waited for. */
const reapedChildrenTicks = (fields: string[]) => Number(fields[13]) + Number(fields[14]);

export function procStatus(pid: number | undefined): { rssMb: number; cpuTicks: number } | null {
  if (!pid) return null;
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return { rssMb: kb / 1024, cpuTicks: ownTicks(statFields(pid)) };
  } catch {
    return null; // not on Linux, or the process is gone
  }
}

/**
 * The CPU time of a process and all its children, living or ended: PostgreSQL serves each connection from a process
 * of its own that the postmaster starts (and waits for when it ends), beside its writer, checkpointer and vacuum.
 */
export function processTreeCpuTicks(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const root = statFields(pid);
    let ticks = ownTicks(root) + reapedChildrenTicks(root);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const fields = statFields(Number(entry));
        if (Number(fields[1]) === pid) ticks += ownTicks(fields) + reapedChildrenTicks(fields);
      } catch {
        // ended while we looked: its time is now the postmaster's reaped children's
      }
    }
    return ticks;
  } catch {
    return null;
  }
}

/** CPU µs per request from two readings of clock ticks around `requests` requests, or null when either is missing. */
export function cpuUsPerRequest(before: number | null | undefined, after: number | null | undefined, requests: number): number | null {
  if (before === null || before === undefined || after === null || after === undefined || requests <= 0) return null;
  return ((after - before) * 1e6) / CLOCK_TICKS_PER_SECOND / requests;
}
