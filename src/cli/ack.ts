/** `deploy-watchdog ack ALERT`: acknowledges a firing alert (see `acknowledge-command.ts`). */
import { acknowledgeCommand } from './acknowledge-command.js';

const ack = acknowledgeCommand('ack');

export default ack;
