/**
 * The SMTP peer for tests: the same smtp-server based sink the demo runs (packages/simulator/src/demo/peers), with
 * the messages parsed back into subject, text, HTML and headers.
 */
export {
  startSmtpSink,
  type SmtpSink,
  type SmtpSinkMode,
  type SmtpSinkOptions,
  type SinkMessage,
} from '../../packages/simulator/src/demo/peers/smtp-sink.js';
