import fs from 'node:fs';
import path from 'node:path';
import { configJsonSchema } from '../config/config-json-schema.js';
import { defineCommand } from './cli-helpers.js';
import { EXIT, print } from './command.js';

const usage = `usage: deploy-watchdog schema [--out FILE]

Prints the JSON Schema of the configuration file (for editors: put
"# yaml-language-server: $schema=./config.schema.json" on a config's first line), or writes it to FILE.`;

/** The schema as the text written to `config.schema.json`. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

/** `deploy-watchdog schema [--out FILE]`. */
const schema = defineCommand({
  usage,
  options: { out: { type: 'string', short: 'o' } },
  configFile: false,
  parse: ({ values }) => values.out,
  async run(out, io) {
    const text = configJsonSchemaText();
    if (!out) return print(io.stdout, text);
    // Written beside and renamed into place, so an editor never reads half a schema.
    const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${process.pid}.tmp`);
    try {
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, out);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      return print(io.stderr, `cannot write ${out}: ${(err as Error).message}\n`, EXIT.incomplete);
    }
    return print(io.stderr, `wrote ${out}\n`);
  },
});

export default schema;
