/**
 * The Slack stand-in for tests: the same local webhook receiver the demo runs
 * (src/notify/peers), so tests and demo exercise one implementation.
 */
export {
  startWebhookReceiver,
  type WebhookMode,
  type WebhookReceiver,
  type WebhookReceiverOptions,
  type SlackLikePayload,
} from '../../src/notify/peers/webhook-receiver.js';
