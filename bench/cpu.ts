// How much CPU time processes other than the benchmark's own took during a measurement: the servers and autocannon
// share the machine with whatever else runs on it, and a busy neighbour quietly spoils the numbers.
// Linux only (reads /proc); elsewhere the share is unknown (NaN).

import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

/** Linux reports process times in clock ticks; USER_HZ is 100 on every common configuration. */
const TICK_MS = 10;

export interface CpuSample {
  /** Busy milliseconds of all CPUs. */
  busy: number;
  /** Busy milliseconds of this process and the given children. */
  ours: number;
}

/**
 * `serviceCommand` names processes that work for the benchmark too (`postgres`: the database server's backends
 * answer the server's queries), counted as ours rather than as a neighbour's.
 */
export function sampleCpu(childPids: number[], serviceCommand?: string): CpuSample {
  let busy = 0;
  for (const cpu of cpus()) busy += cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq;
  const self = process.cpuUsage();
  let ours = (self.user + self.system) / 1000;
  for (const pid of [...childPids, ...(serviceCommand ? pidsOf(serviceCommand) : [])]) ours += processMs(pid);
  return { busy, ours };
}

function pidsOf(command: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === command) pids.push(Number(entry));
    } catch {
      // It exited meanwhile.
    }
  }
  return pids;
}

/** The share (0..1) of all CPU time between two samples that went to other processes. */
export function othersShare(before: CpuSample, after: CpuSample, seconds: number): number {
  const capacity = seconds * 1000 * cpus().length;
  const others = after.busy - before.busy - (after.ours - before.ours);
  if (!Number.isFinite(others) || capacity <= 0) return Number.NaN;
  return Math.min(1, Math.max(0, others / capacity));
}

function processMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}
