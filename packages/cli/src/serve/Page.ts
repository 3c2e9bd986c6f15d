/**
 * The dashboard's page: one HTML document, its stylesheet and its script (`PageScript.ts`, bundled
 * from `page/`), all served by spool from its bundle. The document is a shell: the script builds
 * everything in it, as text, from the JSON it reads, and updates it in place as events come.
 */

/** The page, its assets asked for with the token it was opened with (the token only as a URL-safe escape). */
export const pageHtml = (token: string | null) => {
  const query = token === null ? "" : `?token=${encodeURIComponent(token)}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>spool · loops</title>
<link rel="stylesheet" href="/app.css${query}">
<script src="/app.js${query}" defer></script>
</head>
<body>
<header class="top">
  <div class="brand"><span class="mark">spool</span><span class="repo" id="repo"></span></div>
  <div class="connection connecting" id="connection" role="status"><span class="dot"></span><span class="label">connecting</span></div>
</header>
<main id="app"><p class="loading">Loading the loops…</p></main>
<noscript><p class="loading">The dashboard needs JavaScript to show the loops.</p></noscript>
</body>
</html>
`
}

export const pageCss = `
:root {
  --bg: #f5f6f8;
  --card: #ffffff;
  --text: #1b1f24;
  --muted: #5f6670;
  --faint: #8b929c;
  --border: #e2e5ea;
  --line: #eef0f3;
  --accent: #3b5bdb;
  --accent-soft: #e8edff;
  --green: #1f8a5b;
  --green-soft: #e3f5ec;
  --red: #c92a2a;
  --red-soft: #fdecec;
  --amber: #a15c00;
  --amber-soft: #fff3d6;
  --grey-soft: #eef0f3;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { background: var(--bg); color: var(--text); font: 14px/1.5 var(--sans); -webkit-font-smoothing: antialiased; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.top { display: flex; align-items: center; justify-content: space-between; padding: 12px 28px; background: var(--card); border-bottom: 1px solid var(--border); position: sticky; top: 0; z-index: 2; }
.brand { display: flex; align-items: baseline; gap: 10px; min-width: 0; }
.mark { font-weight: 700; font-size: 17px; letter-spacing: -0.01em; }
.mark::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 50%; border: 3px solid var(--accent); margin-right: 8px; vertical-align: -1px; }
.repo { color: var(--muted); font-family: var(--mono); font-size: 13px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.connection { display: inline-flex; align-items: center; gap: 7px; font-size: 12px; font-weight: 600; padding: 3px 10px; border-radius: 999px; background: var(--grey-soft); color: var(--muted); }
.connection .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--faint); }
.connection.live { background: var(--green-soft); color: var(--green); }
.connection.live .dot { background: var(--green); animation: pulse 2s ease-in-out infinite; }
.connection.reconnecting { background: var(--amber-soft); color: var(--amber); }
.connection.reconnecting .dot { background: var(--amber); }
@keyframes pulse { 0%, 100% { opacity: 1; } 50% { opacity: 0.35; } }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
.loading, .empty { color: var(--muted); }
h1 { font-size: 20px; font-weight: 650; margin: 0; letter-spacing: -0.01em; }
h1.change-title { font-family: var(--mono); font-size: 19px; letter-spacing: 0; }
h2 { font-size: 13px; font-weight: 600; margin: 0; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
.heading { display: flex; align-items: center; justify-content: space-between; gap: 16px; margin-bottom: 16px; flex-wrap: wrap; }
.heading .title { display: flex; align-items: center; gap: 12px; min-width: 0; flex-wrap: wrap; }
.summary { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 10px; }
.card > .card-head { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; padding: 12px 16px; border-bottom: 1px solid var(--line); }
.card > .card-body { padding: 14px 16px; }
.card-note { color: var(--faint); font-size: 12px; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-size: 12px; font-weight: 600; color: var(--muted); padding: 10px 14px; border-bottom: 1px solid var(--border); white-space: nowrap; }
td { padding: 11px 14px; border-bottom: 1px solid var(--line); vertical-align: middle; }
tr:last-child td { border-bottom: none; }
tbody tr.link { cursor: pointer; }
tbody tr.link:hover td { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.mono { font-family: var(--mono); font-size: 12.5px; }
.change { font-family: var(--mono); font-size: 13px; font-weight: 600; color: var(--text); }
.muted { color: var(--muted); }
.faint { color: var(--faint); }
.badge { display: inline-flex; align-items: center; gap: 6px; font-size: 12px; font-weight: 600; padding: 2px 9px; border-radius: 999px; background: var(--grey-soft); color: var(--muted); white-space: nowrap; }
.badge::before { content: ""; width: 6px; height: 6px; border-radius: 50%; background: currentColor; opacity: 0.8; }
.badge.running, .badge.continue { background: var(--accent-soft); color: var(--accent); }
.badge.running::before { animation: pulse 1.6s ease-in-out infinite; }
.badge.complete { background: var(--green-soft); color: var(--green); }
.badge.failed, .badge.timeout, .badge.abandoned { background: var(--red-soft); color: var(--red); }
.badge.waiting, .badge.max-iterations, .badge.stopped, .badge.usage-limit, .badge.limited, .badge.deadline, .badge.changes, .badge.review-rejected { background: var(--amber-soft); color: var(--amber); }
.progress { display: inline-flex; align-items: center; gap: 8px; }
.bar-track { display: inline-block; width: 64px; height: 6px; border-radius: 3px; background: var(--line); overflow: hidden; }
.bar-fill { display: block; height: 100%; background: var(--green); border-radius: 3px; }
.problem { color: var(--red); font-size: 12px; }
.back { display: inline-block; margin-bottom: 14px; font-size: 13px; }
.meta { color: var(--muted); font-size: 13px; margin-top: 4px; display: flex; gap: 14px; flex-wrap: wrap; }
.stats { display: grid; grid-template-columns: repeat(5, minmax(0, 1fr)); gap: 12px; margin: 18px 0; }
.stat { padding: 12px 16px; }
.stat .label { font-size: 12px; color: var(--muted); }
.stat .value { font-size: 20px; font-weight: 650; margin-top: 2px; font-variant-numeric: tabular-nums; letter-spacing: -0.01em; }
.stat .sub { font-size: 12px; color: var(--faint); }
.callout { padding: 10px 14px; border-radius: 8px; background: var(--amber-soft); color: var(--amber); margin-bottom: 18px; font-size: 13px; }
.callout.complete { background: var(--green-soft); color: var(--green); }
.charts { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 12px; margin-bottom: 18px; }
.chart svg { display: block; width: 100%; height: 120px; }
.chart .axis { display: flex; justify-content: space-between; font-size: 11px; color: var(--faint); margin-top: 6px; }
.chart rect.bar { fill: var(--accent); opacity: 0.85; }
.chart rect.bar:hover { opacity: 1; }
.chart rect.bar.failed, .chart rect.bar.timeout { fill: var(--red); }
.chart rect.bar.complete { fill: var(--green); }
.chart rect.bar.stopped, .chart rect.bar.limited, .chart rect.bar.interrupted, .chart rect.bar.changes { fill: #c99a2e; }
.chart line.base { stroke: var(--border); stroke-width: 1; vector-effect: non-scaling-stroke; }
.chart .chart-empty { height: 120px; display: flex; align-items: center; justify-content: center; color: var(--faint); font-size: 13px; text-align: center; }
.grid2 { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px; margin-bottom: 18px; }
.grid2 > .card { display: flex; flex-direction: column; min-height: 0; }
pre.text { flex: 1; margin: 0; font-family: var(--mono); font-size: 12.5px; line-height: 1.55; white-space: pre-wrap; word-break: break-word; min-height: 220px; max-height: 440px; overflow: auto; padding: 14px 16px; background: #fbfbfc; border-radius: 0 0 10px 10px; }
pre.output { background: #15181d; color: #e4e7eb; }
.checks { display: flex; flex-direction: column; gap: 2px; }
.check { font-family: var(--mono); font-size: 12px; white-space: nowrap; }
.check.passed { color: var(--green); }
.check.failed { color: var(--red); }
.section { margin-bottom: 18px; }
.agents { margin-bottom: 18px; }
.agent-list { display: flex; flex-direction: column; gap: 4px; font-family: var(--mono); font-size: 12.5px; color: var(--muted); }
.agent-list .agent.current { color: var(--text); font-weight: 600; }
td .agent { margin-top: 3px; }
.reviews { margin-bottom: 18px; }
.review-total { font-family: var(--mono); font-size: 12.5px; }
.review-list { margin-top: 2px; }
.check.review { cursor: default; }
.check.review[title] { cursor: help; text-decoration: underline dotted; }
@media (max-width: 960px) {
  .stats { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .charts, .grid2 { grid-template-columns: minmax(0, 1fr); }
  .hide-narrow { display: none; }
}
`
