/**
 * The SMTP peer for tests: the same smtp-server based sink the demo runs (src/notify/peers), with
 * the messages parsed back into subject, text, HTML and headers.
 */
export {
  startSmtpSink,
  type SmtpSink,
  type SmtpSinkMode,
  type SmtpSinkOptions,
  type SinkMessage,
} from '../../src/notify/peers/smtp-sink.js';
