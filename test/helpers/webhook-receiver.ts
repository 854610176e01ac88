/**
 * The Slack stand-in for tests: the same local webhook receiver the demo runs
 * (src/demo/peers), so tests and demo exercise one implementation.
 */
export {
  startWebhookReceiver,
  type WebhookMode,
  type WebhookReceiver,
  type WebhookReceiverOptions,
  type SlackLikePayload,
} from '../../src/demo/peers/webhook-receiver.js';
