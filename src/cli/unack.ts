/** `deploy-watchdog unack ALERT`: gives an alert's acknowledgement back (see `acknowledge-command.ts`). */
import { acknowledgeCommand } from './acknowledge-command.js';

const unack = acknowledgeCommand('unack');

export default unack;
