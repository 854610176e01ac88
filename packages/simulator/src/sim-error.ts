import { ERROR_STATUS, type ErrorCode } from '../../../src/api/schemas.js';

/** A refusal the simulator answers with `{error:{code,message}}` and the code's HTTP status. */
export class SimError extends Error {
  override name = 'SimError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}
