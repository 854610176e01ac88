import { z } from 'zod';

/** Units of a size: binary (KiB, MiB) as written, and kB/MB read the same way, as ops tools mostly do. */
const UNIT_BYTES = {
  B: 1,
  KiB: 1024,
  kB: 1024,
  KB: 1024,
  MiB: 1024 ** 2,
  MB: 1024 ** 2,
  GiB: 1024 ** 3,
  GB: 1024 ** 3,
} as const;
const SIZE_RE = /^(\d+)\s*(B|KiB|kB|KB|MiB|MB|GiB|GB)$/;

/** What a size looks like, for error messages. */
export const SIZE_HINT = 'a size such as 512KiB, 16MiB or 1GiB';

/**
 * Config schema of a size in bytes: `16MiB` in the file, bytes once parsed. `MB` and `kB` are read
 * as MiB and KiB (the difference never matters for a bound). A bare number is refused, as for
 * durations: `max_answer_size: 16` could mean anything.
 */
export const byteSizeSchema = z
  .string({ error: `must be ${SIZE_HINT} (a string with a unit)` })
  .regex(SIZE_RE, `must be ${SIZE_HINT}`)
  .transform((text) => {
    const [, amount, unit] = SIZE_RE.exec(text)!;
    return Number(amount) * UNIT_BYTES[unit as keyof typeof UNIT_BYTES];
  });
