/**
 * What Slack takes at most in a message, a leaf: the rendering (`slack-render.ts`), the buttons,
 * the console links and the answers to a click all keep within it.
 */

/** Slack's limits (https://api.slack.com/reference/block-kit/blocks). */
export const SLACK_LIMITS = {
  blocks: 50,
  text: 3000,
  header: 150,
  fieldsPerSection: 10,
  fieldText: 2000,
  buttonText: 75,
  buttonUrl: 3000,
  actionsElements: 25,
} as const;
