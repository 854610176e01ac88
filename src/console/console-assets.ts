/**
 * The console's style sheet and its one small script, served from memory at `/static/…`: no build
 * step, no files to install beside the daemon. Every page works without the script; it only
 * submits a select marked `data-autosubmit` when it changes.
 */

const CSS = `
:root { --fg: #1d2330; --muted: #667085; --line: #e3e6ea; --bg: #f7f8fa; --accent: #1f5fbf;
  --crit: #b42318; --warn: #b54708; --info: #175cd3; --ok: #067647; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #1d2330; color: #fff; }
header a { color: #d0d5dd; text-decoration: none; }
header .brand { font-weight: 700; color: #fff; }
header nav { display: flex; gap: 16px; flex: 1; }
header nav a[aria-current="page"] { color: #fff; border-bottom: 2px solid #fff; }
header .who { color: #d0d5dd; font-size: 13px; }
main { padding: 16px 24px 32px; max-width: 1400px; }
footer { padding: 8px 24px 24px; color: var(--muted); font-size: 12px; }
h1 { font-size: 20px; margin: 8px 0 12px; }
h2 { font-size: 15px; margin: 20px 0 8px; }
a { color: var(--accent); }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; background: #eef0f3; padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
table.alerts { table-layout: fixed; }
table.alerts th:nth-child(1) { width: 88px; } table.alerts th:nth-child(2) { width: 76px; } table.alerts th:nth-child(3) { width: 72px; } table.alerts th:nth-child(5) { width: 32%; }
table.alerts td:nth-child(-n+3), time { white-space: nowrap; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: #fafbfc; }
.title-row { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
.title-row h1 { margin-right: auto; }
.counts, .hint, .muted, .crumbs { color: var(--muted); }
.hint { font-size: 12px; }
.group h2 .group-label { color: var(--muted); font-weight: 400; }
.count { display: inline-block; min-width: 20px; padding: 0 6px; border-radius: 10px; background: #eef0f3; text-align: center; font-size: 12px; }
.sev { display: inline-block; padding: 1px 6px; border-radius: 3px; font-size: 12px; font-weight: 600; color: #fff; }
.sev-critical { background: var(--crit); } .sev-warning { background: var(--warn); } .sev-info { background: var(--info); }
.status { font-size: 12px; } .status-firing { color: var(--crit); } .status-pending { color: var(--warn); } .status-resolved { color: var(--ok); }
.labels { display: inline-flex; flex-wrap: wrap; gap: 4px; margin-top: 2px; }
.label { font: 11px ui-monospace, "DejaVu Sans Mono", monospace; background: #eef0f3; border-radius: 3px; padding: 0 4px; overflow-wrap: anywhere; }
.summary { font-weight: 600; text-decoration: none; color: var(--fg); }
.summary:hover { text-decoration: underline; }
tr.silenced td { background: #f4f3ff; }
ul.delivery-state { list-style: none; margin: 0; padding: 0; font-size: 12px; }
.why.acknowledged { color: #026aa2; font-weight: 600; } tr.acknowledged td { background: #f0f9ff; }
.why.silenced { color: #5925dc; font-weight: 600; } .why.inhibited { color: var(--warn); font-weight: 600; } .why.pending { color: var(--warn); }
.channel.status-held, .channel.status-expired { color: var(--warn); } .channel.status-sent { color: var(--ok); }
.ok { color: var(--ok); } .error { color: var(--crit); } .warn { color: var(--warn); } tr.bad td { background: #fef3f2; }
.notice { padding: 8px 12px; border-radius: 4px; border: 1px solid var(--line); background: #fff; }
.notice-ok { border-color: #abefc6; background: #ecfdf3; } .notice-error { border-color: #fecdca; background: #fef3f2; } .notice-warn { border-color: #fedf89; background: #fffaeb; }
.empty { color: var(--muted); padding: 16px; background: #fff; border: 1px dashed var(--line); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; background: #fff; padding: 8px 12px; border: 1px solid var(--line); }
.facts dt { color: var(--muted); } .facts dd { margin: 0; overflow-wrap: anywhere; }
.alert-title { display: flex; gap: 8px; align-items: baseline; overflow-wrap: anywhere; }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 2px solid var(--line); }
ol.timeline > li { margin: 0 0 12px 0; padding-left: 12px; }
ol.timeline .kind { text-transform: uppercase; font-size: 12px; }
ol.timeline table { margin-top: 4px; }
.event-firing .kind, .event-escalated .kind { color: var(--crit); } .event-resolved .kind { color: var(--ok); }
.remediation .kind { color: var(--accent); }
form.inline { display: inline; }
form.acknowledge { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin: 12px 0; } form.acknowledge input { display: block; width: 24em; max-width: 100%; margin-top: 4px; }
.event-acknowledged .kind, .event-unacknowledged .kind { color: #026aa2; }
.comment { font-style: italic; }
form.list-ack { margin-top: 4px; } form.list-ack button { font-size: 12px; padding: 0 6px; } .status.acknowledged { color: #026aa2; }
form label { display: block; margin: 8px 0; font-weight: 600; }
form label .hint { font-weight: 400; }
textarea, input:not([type]), input[type="password"], input[type="search"], select { font: 13px ui-monospace, "DejaVu Sans Mono", monospace; padding: 4px 6px; border: 1px solid #cfd4dc; border-radius: 4px; }
.silence-form textarea, .silence-form input, .login input { display: block; width: 100%; max-width: 640px; margin-top: 4px; }
.buttons { display: flex; gap: 8px; margin-top: 12px; }
button, .button { font: inherit; padding: 4px 12px; border: 1px solid #cfd4dc; border-radius: 4px; background: #fff; color: var(--fg); cursor: pointer; text-decoration: none; display: inline-block; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.link { border: 0; background: none; color: #d0d5dd; padding: 0; text-decoration: underline; }
form.expire { display: flex; gap: 4px; } form.expire input { width: 160px; }
.preview { background: #fff; border: 1px solid var(--line); padding: 8px 16px; margin-top: 16px; max-width: 900px; }
ul.covered { padding-left: 16px; } ul.problems { color: var(--crit); }
tr.marked td { background: #ecfdf3; }
pre.config { background: #fff; border: 1px solid var(--line); padding: 12px; overflow: auto; font-size: 12px; }
.url { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
`;

const JS = `'use strict';
// Submit a select's form when it changes; without this script the form has its own button.
document.addEventListener('change', (e) => {
  const t = e.target;
  if (t instanceof HTMLSelectElement && t.hasAttribute('data-autosubmit') && t.form) t.form.submit();
});
`;

/** The files under `/static/`, by path: each its type and its text. */
export const CONSOLE_ASSETS: ReadonlyMap<string, { type: string; text: string }> = new Map([
  ['/static/console.css', { type: 'text/css; charset=utf-8', text: CSS }],
  ['/static/console.js', { type: 'text/javascript; charset=utf-8', text: JS }],
]);
