/**
 * The Slack stand-in for tests: the same local webhook receiver the demo runs
 * (packages/simulator/src/demo/peers), so tests and demo exercise one implementation.
 */
export {
  startWebhookReceiver,
  type WebhookMode,
  type WebhookReceiver,
  type WebhookReceiverOptions,
  type SlackLikePayload,
} from '../../packages/simulator/src/demo/peers/webhook-receiver.js';
