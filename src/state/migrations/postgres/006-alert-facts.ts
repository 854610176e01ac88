import type { Migration } from '../../migration.js';

/** PostgreSQL's `../006-alert-facts.ts`: what a reader is shown of an alert. */
const alertFacts: Migration = {
  version: 6,
  name: 'alert-facts',
  up: `
    ALTER TABLE alerts ADD COLUMN facts TEXT;
    ALTER TABLE alerts ADD COLUMN brief TEXT;
  `,
};

export default alertFacts;
