import { esc } from './dashboard-parts.js';

// Every page yoke serves to a browser, in one frame: the style, the header
// with the way home and (signed in) the way out. The fleet and repository
// pages, the dry run, the doctor, the sign-in, and the pages that say no.
// The layout fits a phone's 390 px as it fits 1280: wide tables scroll in
// their own card on a narrow screen, never the page.

const STYLE = `
body{font:14px system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{display:flex;gap:1rem;align-items:center;padding:.6rem 1.5rem;background:#24292f;color:#fff}
header a{color:#fff}header h1{font-size:1.1rem;margin:0}header form{margin-left:auto}
main{padding:1rem 1.5rem}section{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin-bottom:1rem}
h2{font-size:1rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eaeef2;padding:.3rem .5rem;text-align:left;vertical-align:top}
.title{color:#57606a}td.time{white-space:nowrap}code{font-size:12px;overflow-wrap:anywhere}table code{overflow-wrap:normal}.flag{color:#a40e26}tr.paused td{background:#fff1f0}pre.settings{background:#f6f8fa;padding:.5rem;font-size:12px}tr.disabled td{background:#fffbe6}
svg#timeline{width:100%;height:auto}svg#spend-chart{width:100%;max-width:560px;height:auto}#spend-chart rect{fill:#0969da}#spend-chart .over rect{fill:#cf222e}#spend-chart .budget line{stroke:#9a6700;stroke-dasharray:6 4}svg text{font-size:11px;fill:#57606a}.lane{fill:#f6f8fa}.over-cap .lane{fill:#ffebe9}.over-cap text{fill:#a40e26}
.bar{stroke:#fff;stroke-width:1}.bar.other{opacity:.25}.kind-afk_auto{fill:#2da44e;background:#2da44e}.kind-afk_manual{fill:#1a7f37;background:#1a7f37}
.kind-fix{fill:#bf8700;background:#bf8700}.kind-lander{fill:#0969da;background:#0969da}
.bar.state-failure{stroke:#cf222e;stroke-width:3}.bar.state-timeout{stroke:#8250df;stroke-width:3;stroke-dasharray:3 2}.bar.state-cancelled{opacity:.5}.bar.state-live{stroke:#24292f;stroke-dasharray:4 2;stroke-width:2}
.key{display:inline-block;width:.8rem;height:.8rem;margin:0 .2rem 0 .6rem;vertical-align:middle;border:2px solid transparent}
.key.state-live{border:2px dashed #24292f}.key.state-failure{border-color:#cf222e}.key.state-timeout{border:2px dotted #8250df}.key.state-cancelled{opacity:.5;background:#8c959f}
.stages{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0}.stage{padding:.2rem .5rem;border-radius:4px;background:#eaeef2}.stage.current{outline:2px solid #0969da}
.stage.state-succeeded,.stage.state-settled{background:#dafbe1}.stage.state-failed{background:#ffebe9}.removed{text-decoration:line-through}
pre{white-space:pre-wrap;overflow-wrap:anywhere}table.doctor td{overflow-wrap:anywhere}
td.work .title{display:block;max-width:22rem;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
td.outcome{min-width:6rem;max-width:24rem}td.outcome .reason{display:block;color:#57606a;font-size:12px}
dl.words{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;font-size:12px;color:#57606a}dl.words dt{font-weight:600}dl.words dd{margin:0}
.problem{color:#a40e26}form.sign-in input{width:100%;max-width:28rem;box-sizing:border-box}
@media (max-width:900px){main{padding:.5rem}section{padding:.5rem}header{padding:.5rem}table{display:block;overflow-x:auto}}
.narrow-only{display:none}table.doctor td.check{overflow-wrap:normal;white-space:nowrap}
@media (max-width:600px){svg#timeline{display:none}.narrow-only{display:block}table.runs,table.runs tbody,table.runs tr,table.runs td{display:block}table.runs tr:first-child{display:none}table.runs tr{border-bottom:1px solid #eaeef2;padding:.3rem 0}table.runs td{border:0;padding:.1rem .5rem}table.runs td.outcome{font-weight:600}}`;

/** A page: its title, what the header names after "yoke fleet", whether a sign-out button shows, and its <main>. */
export interface PageFrame {
  title: string;
  /** After "yoke fleet" in the header: the repository the page is about, if any. */
  about?: string;
  signedIn: boolean;
  main: string;
  /** The <main>'s attributes, e.g. the dashboard's refresh period. */
  mainAttrs?: string;
  script?: string;
}

export function pageHtml(f: PageFrame): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(f.title)}</title><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<style>${STYLE}</style></head><body>
<header><h1><a href="/yoke">yoke fleet</a></h1>${f.about ? `<span>${esc(f.about)}</span>` : ''}
${f.signedIn ? '<form method="post" action="/yoke/session/end"><button>Sign out</button></form>' : ''}</header>
<main id="main"${f.mainAttrs ? ` ${f.mainAttrs}` : ''}>${f.main}</main>
${f.script ? `<script src="${esc(f.script)}" defer></script>\n` : ''}</body></html>`;
}
