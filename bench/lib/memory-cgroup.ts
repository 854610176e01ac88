/**
 * A memory-limited cgroup to run the benchmark's watchdog in, as a container (`docker run
 * --memory 512m`) or a systemd unit (`MemoryMax=512M`) would: Node reads the limit
 * (`process.constrainedMemory()`) and V8 sizes its heap from it instead of from the machine's
 * memory. Needs root and a cgroup file system with the memory controller (v2 or v1).
 */
import fs from 'node:fs';
import path from 'node:path';

/** A cgroup with a memory limit: wrap a command in it, remove it after. */
export interface MemoryCgroup {
  /** `argv` as a command that first moves itself into the cgroup, then runs `argv`. */
  wrap(argv: readonly string[]): { command: string; args: string[] };
  remove(): void;
}

const V2 = '/sys/fs/cgroup';
const V1 = '/sys/fs/cgroup/memory';

/** Creates the cgroup with `limitMb` of memory, or throws saying why it cannot. */
export function createMemoryCgroup(limitMb: number): MemoryCgroup {
  const name = `deploy-watchdog-bench-${process.pid}`;
  const bytes = String(limitMb * 1_048_576);
  let dir: string;
  const controllers = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
  if (controllers(path.join(V2, 'cgroup.subtree_control')).includes('memory')) {
    dir = path.join(V2, name);
    fs.mkdirSync(dir);
    limit(dir, [
      ['memory.max', bytes],
      ['memory.swap.max', '0'],
    ]);
  } else if (fs.existsSync(path.join(V1, 'memory.limit_in_bytes'))) {
    dir = path.join(V1, name);
    fs.mkdirSync(dir);
    // memsw (memory + swap) equal to the limit: no swap, so RSS is not made small by swapping out.
    limit(dir, [
      ['memory.limit_in_bytes', bytes],
      ['memory.memsw.limit_in_bytes', bytes],
    ]);
  } else {
    throw new Error('--memory-limit-mb needs a cgroup file system with the memory controller enabled (/sys/fs/cgroup)');
  }
  const procs = path.join(dir, 'cgroup.procs');
  return {
    wrap: (argv) => ({ command: '/bin/sh', args: ['-c', `echo $$ > '${procs}' && exec "$@"`, 'sh', ...argv] }),
    remove: () => {
      try {
        fs.rmdirSync(dir);
      } catch (err) {
        process.stderr.write(`bench: could not remove the cgroup ${dir}: ${String(err)}\n`);
      }
    },
  };
}

/** Writes each limit that exists in `dir` (memsw/swap files exist only with swap accounting); removes `dir` on failure. */
function limit(dir: string, files: [string, string][]): void {
  try {
    for (const [file, value] of files) {
      if (fs.existsSync(path.join(dir, file))) fs.writeFileSync(path.join(dir, file), value);
    }
  } catch (err) {
    fs.rmdirSync(dir);
    throw new Error(`cannot set the memory limit of ${dir}: ${String(err)}`);
  }
}
