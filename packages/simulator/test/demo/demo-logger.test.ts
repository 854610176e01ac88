/**
 * The demo's own log on stderr: warnings and worse, but not the job overruns of its few-second
 * beat (a slow laptop overruns it), which the daemon's overrun component says.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { demoLogger } from '../../src/demo/run-demo.js';
import { COMPONENT } from '../../../../src/lib/logger.js';
import { OVERRUNS_COMPONENT } from '../../../../src/app/job-overruns.js';

describe('the demo logger', () => {
  it('drops the job overruns and writes every other warning', () => {
    let written = '';
    const stderr = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk);
        done();
      },
    });
    const log = demoLogger(stderr);
    log.child({ [COMPONENT]: OVERRUNS_COMPONENT }).warn('the runs read has taken 6s, longer than its schedule');
    log.child({ stage: 'context' }).warn('a log could not be read');
    log.info('not a warning');
    expect(written).not.toContain('longer than its schedule');
    expect(written).toContain('a log could not be read');
    expect(written).not.toContain('not a warning');
  });
});
