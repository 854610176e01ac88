import { Secret } from '../../lib/secret.js';
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type {
  AlertsNotification,
  Channel,
  ChannelKind,
  NoticeNotification,
  Notification,
  RenderOptions,
  SendResult,
} from './channel.js';
import { renderOptionsOf } from './channel.js';
import {
  eventFactList,
  TONES,
  type AlertsDescription,
  type EventDescription,
  type Fact,
  type LogDescription,
} from './describe.js';
import { EMAIL_TEMPLATE_PARTS, emailConfigSchema, type EmailConfig } from './email-config.js';
import { escapeHtml, escapeHtmlLines, oneLine, plainText, safeHttpUrl } from './escape.js';
import { channelTemplates, defaultTemplates, type ChannelTemplates } from './template-config.js';
import { describedAlerts, noticeTitle, plainLine } from './template-view.js';
import { guardedSend } from './guarded-send.js';
import { OwnedSmtpTransport, type SmtpSendOutcome } from './smtp-transport.js';

/** A rendered email: the subject, its own headers and the same content as plain text and as HTML. */
export interface EmailMessage {
  subject: string;
  /** Headers of our own: {@link MACHINE_HEADERS}, on every message. */
  headers: Readonly<Record<string, string>>;
  text: string;
  html: string;
}

/**
 * Every message says it was written by a program (RFC 3834), so vacation responders and
 * out-of-office replies do not answer it and mail rules can tell it from a person's.
 */
export const MACHINE_HEADERS: Readonly<Record<string, string>> = { 'Auto-Submitted': 'auto-generated' };

/** What rendering needs besides the notification: the subject's prefix, as the channel's config gives it. */
export type EmailRenderOptions = RenderOptions & Pick<EmailConfig, 'subject_prefix'>;

/** `templates/email/`: the built-in rendering's own templates. */
export const EMAIL_TEMPLATES = defaultTemplates('email', EMAIL_TEMPLATE_PARTS);

/**
 * An email channel's templates. A `text` given without an `html` is used for the HTML part too, as
 * the plain text it is: its own words escaped for HTML like its values, its line breaks kept.
 */
export function emailTemplates(given: EmailConfig['template']): ChannelTemplates {
  const templates = channelTemplates(EMAIL_TEMPLATES, EMAIL_TEMPLATE_PARTS, given);
  if (given?.text === undefined || given.html !== undefined) return templates;
  return {
    ...templates,
    html: templates.text!.withLiteral((text) =>
      escapeHtmlLines(text, Number.POSITIVE_INFINITY).replace(/\n/g, '<br>\n'),
    ),
  };
}

/** Longest subject; mail clients show far less, and long headers get folded. */
const MAX_SUBJECT = 200;
/** Longest single value in the body (a reason, an app name). */
const MAX_VALUE = 1000;

/** Builds the email for a notification. Pure. */
export function renderEmail(n: Notification, options: EmailRenderOptions): EmailMessage {
  return n.type === 'notice' ? renderNotice(n, options) : renderAlerts(n, options);
}

function renderAlerts(n: AlertsNotification, o: EmailRenderOptions): EmailMessage {
  const { d, view, templates } = describedAlerts(n, o, EMAIL_TEMPLATES);
  // The title is a header too.
  const title = plainLine((escape) => templates.title!.render([view], escape), MAX_SUBJECT);
  const subject = oneLine(`${o.subject_prefix} ${title}`, MAX_SUBJECT);
  const leads = view.events.map((e) => ({
    text: templates.text!.render([view, e], (v) => plainText(v, MAX_VALUE)),
    html: templates.html!.render([view, e], (v) => escapeHtml(v, MAX_VALUE)),
  }));
  const shared = d.shared.map((f) => `${f.label}: ${oneLine(f.value, 200)}`).join(' · ');

  // The shared labels are rows under the title, like an event's; how to silence is in the
  // signature, which mail clients set apart from the message.
  const text: string[] = [oneLine(title, MAX_SUBJECT), ...alignedRows(d.shared, '  '), ''];
  // A channel's own templates shape its alerts in the compact form too: the text on one line, the
  // HTML as an item of the list.
  const ownText = templates.text !== EMAIL_TEMPLATES.text;
  const ownHtml = templates.html !== EMAIL_TEMPLATES.html;
  if (d.compact) {
    d.events.forEach((e, i) => text.push(`- ${ownText ? oneLine(leads[i]!.text, MAX_VALUE * 2) : compactText(e)}`));
    text.push('');
  } else {
    d.events.forEach((e, i) => {
      for (const line of eventText(e, leads[i]!.text)) text.push(line);
      text.push('');
    });
  }
  if (d.omitted > 0) text.push(omittedText(d), '');
  const runbooks = d.runbooks.map((r) => ({ label: r.label, value: r.url }));
  const todo = [...d.nextSteps.map((step) => `Next step: ${step}`), ...alignedRows(runbooks, '')];
  if (todo.length > 0) text.push(...todo, '');
  text.push('-- ');
  // The command line as it is: it was built to be shown whole (no control character, no
  // newline, not too long), and cutting or changing it would run something else.
  if (d.silenceCommand) text.push(`To silence: ${d.silenceCommand}`);
  text.push(`deploy-watchdog · ${oneLine(o.channelName, 100)}`);

  const html = page(
    escapeHtml(title, MAX_SUBJECT),
    [
      `<h2 style="margin:0 0 4px">${TONES[d.headline.tone].emoji} ${escapeHtml(title, MAX_SUBJECT)}</h2>`,
      shared ? `<p style="margin:0 0 12px;color:#555">${escapeHtml(shared)}</p>` : '',
      d.compact
        ? `<ul style="padding-left:18px">${d.events.map((e, i) => (ownHtml ? `<li>${leads[i]!.html}</li>` : compactHtml(e))).join('')}</ul>`
        : d.events.map((e, i) => eventHtml(e, leads[i]!.html)).join('\n'),
      d.omitted > 0 ? `<p>${omittedText(d, codeHtml)}</p>` : '',
      ...d.nextSteps.map((step) => `<p style="margin:12px 0 4px"><b>Next step:</b> ${escapeHtml(step)}</p>`),
      ...linkHtml(d.runbooks),
      d.silenceCommand ? `<p style="color:#555">To silence: ${codeHtml(d.silenceCommand)}</p>` : '',
      footer(o.channelName),
    ].join('\n'),
  );
  return { subject, headers: MACHINE_HEADERS, text: text.join('\n'), html };
}

/** "…and 8 more not shown", and where every one is listed when that can be said (the command as `code` shows it). */
function omittedText(d: AlertsDescription, code: (line: string) => string = (line) => line): string {
  const more = `…and ${d.omitted} more not shown.`;
  return d.omittedCommand ? `${more} Every open alert: ${code(d.omittedCommand)}` : more;
}

/** Links of our own (runbooks) as paragraphs, each only when its URL is a safe http(s) address. */
function linkHtml(links: readonly { label: string; url: string }[]): string[] {
  return links.flatMap((l) => {
    const href = safeHttpUrl(l.url);
    return href ? [`<p style="margin:4px 0"><a href="${escapeHtml(href)}">${escapeHtml(l.label, 120)}</a></p>`] : [];
  });
}

/**
 * A shell line as an HTML code element whose text is exactly that line: escaped, never cut, and
 * with its spaces kept (`pre-wrap`), so what the reader sees and copies is the line itself.
 */
function codeHtml(line: string): string {
  return `<code style="white-space:pre-wrap">${escapeHtml(line, Number.POSITIVE_INFINITY)}</code>`;
}

/** One fact row: a fact, and a link where its value has one. All API text, unescaped. */
type Row = Fact & { href?: string | null };

/**
 * Fact rows of an event: app (with its link), the platform's page of its record, then its facts as
 * every channel lists them (`eventFactList`); a resolved one only its app, its page and why it is over.
 */
function eventRows(d: EventDescription): Row[] {
  const rows: Row[] = [];
  const href = safeHttpUrl(d.url);
  // A resolved event keeps only its app link: one click to see it is back.
  if (d.app) rows.push({ label: 'App', value: d.app, href });
  else if (href && d.tone !== 'resolved') rows.push({ label: 'Link', value: href, href });
  const page = d.page && safeHttpUrl(d.page.url);
  if (d.page && page) rows.push({ label: d.page.label, value: page, href: page });
  return [...rows, ...eventFactList(d)];
}

/** Longest log line in the email (the width cut happened when it was read: this is a backstop). */
const MAX_LOG_LINE = 1000;

/** A log line as text: its UTC time, then the line, on one line. */
function logLineText(l: LogDescription['lines'][number]): string {
  const text = oneLine(l.text, MAX_LOG_LINE);
  return l.stamp ? `${l.stamp}  ${text}` : text;
}

/** The log excerpt in the plain-text body: its title, then its lines indented. */
function logText(log: LogDescription | null | undefined): string[] {
  return log ? [`  ${oneLine(log.title, 200)}`, ...log.lines.map((l) => `    ${logLineText(l)}`)] : [];
}

/** The log excerpt in HTML: its title, then its lines in a preformatted block that wraps (a phone's width). */
function logHtml(log: LogDescription): string {
  const lines = log.lines.map((l) => escapeHtml(logLineText(l))).join('\n');
  return [
    `<p style="margin:8px 0 2px;color:#555">${escapeHtml(log.title, 200)}</p>`,
    `<pre style="margin:0;padding:6px 8px;background:#f6f8fa;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere">${lines}</pre>`,
  ].join('\n');
}

/** Label-value lines with the values in one column, whatever the longest label. */
function alignedRows(rows: readonly Row[], indent: string): string[] {
  const labels = rows.map((r) => `${oneLine(r.label, 40)}:`);
  const width = Math.max(0, ...labels.map((l) => l.length)) + 1;
  return rows.map((r, i) => {
    const link = r.href && r.href !== r.value ? `  <${r.href}>` : '';
    return `${indent}${labels[i]!.padEnd(width)}${oneLine(r.value, MAX_VALUE)}${link}`;
  });
}

/** An event in the plain-text part: its template's text (`lead`), then its rows. */
function eventText(d: EventDescription, lead: string): string[] {
  return [...(lead === '' ? [] : [lead]), ...alignedRows(eventRows(d), '  '), ...logText(d.context?.log)];
}

/** "CRITICAL  shop · step restart: database connection refused · 47m". */
function compactParts(d: EventDescription): { app: string | null; rest: string } {
  const parts: string[] = [];
  const named = !d.briefIsSummary && d.app !== null;
  if (!named) parts.push(oneLine(d.summary, MAX_VALUE));
  if (!d.briefIsSummary) parts.push(oneLine(d.brief, MAX_VALUE));
  if (d.age) parts.push(d.age);
  return { app: named ? d.app : null, rest: parts.join(' · ') };
}

function compactText(d: EventDescription): string {
  const { app, rest } = compactParts(d);
  const page = d.page && safeHttpUrl(d.page.url);
  return `${TONES[d.tone].word}  ${app ? `${oneLine(app, 120)} · ` : ''}${rest}${page ? `  <${page}>` : ''}`;
}

function compactHtml(d: EventDescription): string {
  const { app, rest } = compactParts(d);
  const href = safeHttpUrl(d.url);
  const name = app
    ? href
      ? `<a href="${escapeHtml(href)}">${escapeHtml(oneLine(app, 120))}</a> · `
      : `${escapeHtml(oneLine(app, 120))} · `
    : '';
  const page = d.page && safeHttpUrl(d.page.url);
  const pageLink = d.page && page ? ` · <a href="${escapeHtml(page)}">${escapeHtml(d.page.label)}</a>` : '';
  return `<li>${TONES[d.tone].emoji} <b>${TONES[d.tone].word}</b> ${name}${escapeHtml(rest)}${pageLink}</li>`;
}

/** An event in the HTML part: its template's text (`lead`, HTML), then its rows as a table. */
function eventHtml(d: EventDescription, lead: string): string {
  const rows = eventRows(d)
    .map((r) => {
      const value = escapeHtml(oneLine(r.value, MAX_VALUE));
      const cell = r.href ? `<a href="${escapeHtml(r.href)}">${value}</a>` : value;
      return `<tr><th align="left" style="padding:2px 12px 2px 0;color:#555;font-weight:normal">${escapeHtml(r.label, 40)}</th><td style="padding:2px 0">${cell}</td></tr>`;
    })
    .join('');
  return [
    lead === '' ? '' : `<p style="margin:16px 0 4px">${lead}</p>`,
    rows ? `<table cellspacing="0" cellpadding="0" style="border-collapse:collapse">${rows}</table>` : '',
    ...(d.context?.log ? [logHtml(d.context.log)] : []),
  ].join('\n');
}

function renderNotice(n: NoticeNotification, o: EmailRenderOptions): EmailMessage {
  // A header, as an alert's title.
  const title = plainLine((escape) => noticeTitle(n, o, EMAIL_TEMPLATES, escape), MAX_SUBJECT);
  const subject = oneLine(`${o.subject_prefix} ${title}`, MAX_SUBJECT);
  const href = safeHttpUrl(n.url);
  const fields = n.fields ?? [];
  const lines = n.lines ?? [];

  const text: string[] = [title, ''];
  for (const line of alignedRows(fields, '')) text.push(line);
  if (fields.length > 0) text.push('');
  for (const l of lines) text.push(oneLine(l, MAX_VALUE));
  if (href) text.push('', href);
  text.push('', '-- ', `deploy-watchdog · ${oneLine(o.channelName, 100)} · ${oneLine(n.topic, 60)}`);

  const rows = fields
    .map(
      (f) =>
        `<tr><th align="left" style="padding:2px 12px 2px 0;color:#555;font-weight:normal">${escapeHtml(oneLine(f.label, 40))}</th><td>${escapeHtml(oneLine(f.value, MAX_VALUE))}</td></tr>`,
    )
    .join('');
  const html = page(
    escapeHtml(title),
    [
      `<h2 style="margin:0 0 12px">${n.severity ? `${TONES[n.severity].emoji} ` : ''}${escapeHtml(title)}</h2>`,
      rows ? `<table cellspacing="0" cellpadding="0">${rows}</table>` : '',
      ...lines.map((l) => `<p style="margin:4px 0">${escapeHtml(oneLine(l, MAX_VALUE))}</p>`),
      href ? `<p><a href="${escapeHtml(href)}">${escapeHtml(href)}</a></p>` : '',
      footer(o.channelName, n.topic),
    ].join('\n'),
  );
  return { subject, headers: MACHINE_HEADERS, text: text.join('\n'), html };
}

function footer(channelName: string, topic?: string): string {
  const parts = ['deploy-watchdog', channelName, ...(topic ? [topic] : [])].map((p) => escapeHtml(oneLine(p, 100)));
  return `<p style="margin-top:24px;color:#888;font-size:12px">${parts.join(' · ')}</p>`;
}

/**
 * A minimal HTML document; the title is already escaped. A long word from the service (a path in a
 * stack trace, an address) may break anywhere, or a phone would scroll the whole message sideways.
 */
function page(title: string, body: string): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n<body style="font-family:sans-serif;font-size:14px;overflow-wrap:anywhere;word-break:break-word">\n${body}\n</body></html>\n`;
}

/** What a nodemailer error carries: its own fields, and OpenSSL's words for a failed handshake ("wrong version number"). */
type SmtpError = Partial<SMTPConnection.SMTPError> & { reason?: string };

/** "Exceeded storage allocation": the message is too big, even when said at MAIL FROM (its declared SIZE). */
const SMTP_TOO_BIG = 552;

/** Error codes that mean the message or the setup is wrong: sending again will not help. */
const PERMANENT_CODES = new Set(['EAUTH', 'EENVELOPE', 'EMESSAGE', 'ECONFIG', 'EREQUIRETLS']);

/**
 * Classifies a failed SMTP send. A server that refused STARTTLS (`smtp.secure: starttls`) is a
 * setup error whatever its reply code: a server without TLS will not grow it in 24 hours. Then an
 * SMTP reply code decides: 4xx retryable, 5xx permanent. Without one, a failure after the body
 * was handed over is unconfirmed (the server may have the message); an authentication or
 * envelope problem is permanent; connection trouble, timeouts and anything unknown are retryable,
 * so nothing is dropped on a guess. The reason quotes the server's reply, never nodemailer's
 * message (which can echo what was sent).
 */
export function classifySmtpError(err: unknown, bodyHandedOver = false, secrets: readonly Secret[] = []): SendResult {
  const e = (err ?? {}) as SmtpError;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const reply = typeof e.response === 'string' ? `: ${serverReply(e.response, 200, secrets)}` : '';
  const at = typeof e.command === 'string' ? ` at ${oneLine(e.command, 20)}` : '';
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  if (code === 'ETLS' && e.command === 'STARTTLS') {
    return {
      outcome: 'permanent',
      wholeChannel: true,
      reason: `SMTP server refused STARTTLS${reply}; set smtp.secure to "tls" if it takes TLS on connect, or fix the server (smtp.secure: "none" only for a local relay)`,
    };
  }
  if (responseCode !== undefined && responseCode >= 400 && responseCode < 500) {
    return { outcome: 'retryable', reason: `SMTP ${responseCode}${at} (temporary)${reply}` };
  }
  const fix = configFix(code, e.command, responseCode);
  // Refused for the credentials or the addresses of the config, not for this message: so is every other.
  const wholeChannel = fix !== '';
  if (responseCode !== undefined && responseCode >= 500) {
    return { outcome: 'permanent', reason: `SMTP ${responseCode}${at} (rejected)${reply}${fix}`, wholeChannel };
  }
  if (bodyHandedOver) {
    return {
      outcome: 'unconfirmed',
      reason: `SMTP server took the message but never confirmed it (${code ?? 'connection lost'})`,
    };
  }
  if (code && PERMANENT_CODES.has(code)) {
    return {
      outcome: 'permanent',
      reason: `SMTP ${code === 'EAUTH' ? 'authentication failed' : 'refused the message'} (${code})${at}${reply}${fix}`,
      wholeChannel,
    };
  }
  if (code === 'ETIMEDOUT') return { outcome: 'retryable', reason: `SMTP timed out (${code})${at}` };
  // A socket error without a system call is the TLS handshake's (nodemailer names both ESOCKET):
  // its words are Node's or OpenSSL's ("self-signed certificate"), said before the login or the message.
  const tlsProblem = e.reason ?? e.message;
  if (code === 'ESOCKET' && e.syscall === undefined && typeof tlsProblem === 'string') {
    return {
      outcome: 'retryable',
      reason: `SMTP TLS failed: ${serverReply(tlsProblem, 200, secrets)}; smtp.host must be the name on the server's certificate and smtp.secure match the port ("tls" for 465, "starttls" for 587); smtp.tls_reject_unauthorized: false only for a certificate you trust by other means`,
    };
  }
  return { outcome: 'retryable', reason: `SMTP connection failed (${code ?? 'unknown error'})${at}` };
}

/**
 * What to change in the config for a refusal of the channel itself (its login, its addresses), as
 * "; …"; '' for a refusal of this one message (its content, its size).
 */
function configFix(code: string | undefined, command: string | undefined, responseCode: number | undefined): string {
  if (code === 'EAUTH') return '; check smtp.auth.user and smtp.auth.pass';
  if (code !== 'EENVELOPE' || responseCode === SMTP_TOO_BIG) return '';
  if (command !== 'MAIL FROM' && command !== 'RCPT TO') return '';
  if (responseCode === 530) return '; the server wants a login: set smtp.auth';
  return command === 'RCPT TO'
    ? "; check the channel's to"
    : "; check the channel's from: a relay may send only as its login";
}

/**
 * What a send's answer reads as. Some recipients refused while others took it: sending again would
 * duplicate it for the others, so it counts as delivered and names who did not get it, and why.
 */
function answeredSmtp(info: SmtpSendOutcome & { sent: true }, secrets: readonly Secret[]): SendResult {
  const rejected = info.info.rejected.map(String);
  if (rejected.length === 0) return { outcome: 'ok' };
  const errors = (info.info as { rejectedErrors?: SmtpError[] }).rejectedErrors ?? [];
  const replies = errors
    .map((e) => (typeof e.response === 'string' ? serverReply(e.response, 100, secrets) : ''))
    .filter(Boolean);
  return {
    outcome: 'ok',
    refused: `the SMTP server refused ${rejected.map((r) => oneLine(r, 200)).join(', ')}${replies.length > 0 ? ` (${[...new Set(replies)].join('; ')})` : ''}; they did not get it`,
  };
}

/**
 * A reply of the server on one line of at most `max` characters, scrubbed of the secrets before it
 * is cut: a password the server echoes, cut in half, would no longer be found.
 */
function serverReply(response: string, max: number, secrets: readonly Secret[]): string {
  return oneLine(Secret.scrub(response, secrets), max);
}

/**
 * SMTP steps that may each wait up to `smtp.timeout` before nodemailer gives up: DNS, connect,
 * greeting, EHLO, STARTTLS, EHLO again, AUTH (up to three exchanges), MAIL FROM, DATA and the end
 * of the message; one RCPT TO per recipient comes on top.
 */
const SMTP_STEPS = 12;

/**
 * How long one send can take at most: nodemailer has no overall limit, only one per step (its
 * connection, greeting and socket timeouts are all `smtp.timeout`), so the bound is their sum.
 */
export function smtpSendLimitMs(timeoutMs: number, recipients: number): number {
  return timeoutMs * (SMTP_STEPS + recipients);
}

/** The email channel kind: SMTP through nodemailer, one connection per message (no pool). */
export const emailChannel = {
  configSchema: emailConfigSchema,
  templateParts: EMAIL_TEMPLATE_PARTS,
  create(config, deps): Channel<EmailMessage> {
    const templates = emailTemplates(config.template);
    const { smtp } = config;
    const pass = smtp.auth?.pass;
    // Second belt for reasons and logs: the password, and the base64 forms AUTH LOGIN/PLAIN send.
    const secrets = pass
      ? [
          pass,
          new Secret(Buffer.from(pass.reveal()).toString('base64')),
          new Secret(Buffer.from(`\u0000${smtp.auth?.user ?? ''}\u0000${pass.reveal()}`).toString('base64')),
        ]
      : [];
    const transport = new OwnedSmtpTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure === 'tls',
      requireTLS: smtp.secure === 'starttls',
      // 'none' is for a local sink only: do not even try STARTTLS.
      ignoreTLS: smtp.secure === 'none',
      ...(smtp.auth ? { auth: { user: smtp.auth.user, pass: smtp.auth.pass.reveal() } } : {}),
      // No `pool`: one connection per message, so a broken connection never outlives its message.
      connectionTimeout: smtp.timeout,
      greetingTimeout: smtp.timeout,
      socketTimeout: smtp.timeout,
      dnsTimeout: smtp.timeout,
      tls: { rejectUnauthorized: smtp.tls_reject_unauthorized },
      logger: false,
      debug: false,
      // The message never reads local files or fetches URLs, whatever ends up in it.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    const log = deps.logger.child({ channel: config.name, kind: 'email' });
    return {
      kind: 'email',
      sendTimeoutMs: smtpSendLimitMs(smtp.timeout, config.to.length),
      render: (n) =>
        renderEmail(n, { ...renderOptionsOf(config, deps), subject_prefix: config.subject_prefix, templates }),
      send: (message, signal) =>
        guardedSend({
          start: () =>
            transport.send({
              from: config.from,
              to: config.to,
              subject: message.subject,
              headers: { ...message.headers },
              text: message.text,
              html: message.html,
            }),
          signal,
          peer: 'the SMTP server',
          answered: (outcome) =>
            outcome.sent
              ? answeredSmtp(outcome, secrets)
              : classifySmtpError(outcome.error, outcome.bodyHandedOver, secrets),
          failed: (err) => classifySmtpError(err, false, secrets),
          secrets,
          log,
        }),
      async close() {
        transport.close();
      },
    };
  },
} satisfies ChannelKind<EmailConfig, EmailMessage>;
