// The HTML report's stylesheet, inline so the file stands alone when attached or archived.
export const HTML_STYLE = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--panel:#f6f8fa;--line:#d1d9e0;
--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--info:#0969da;--skip:#59636e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--panel:#151b23;
--line:#3d444d;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--info:#4493f8;--skip:#9198a1}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main,footer{max-width:1100px;margin:0 auto;padding:16px 24px}
header{border-bottom:1px solid var(--line)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:0 0 12px;word-break:break-all}h3{font-size:15px;margin:0 0 8px}
.sub,footer{color:var(--muted);font-size:13px}
.run{border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:20px 0;background:var(--bg)}
.badge{display:inline-block;border-radius:999px;padding:1px 10px;font-size:12px;font-weight:600;color:#fff;
vertical-align:2px;margin-right:6px;background:var(--skip);text-transform:uppercase;letter-spacing:.03em}
.b-succeeded,.b-passed{background:var(--ok)}.b-failed,.b-error,.b-timed_out{background:var(--bad)}
.b-running,.b-queued{background:var(--info)}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0 0 12px}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0;word-break:break-all}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 12px}
.counts span{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:2px 10px}
.note{border-left:4px solid var(--bad);background:var(--panel);padding:8px 12px;margin:8px 0}
.note.warn{border-color:var(--warn)}
.step{border-top:1px solid var(--line);padding:12px 0 4px}
.step .v,.dur{color:var(--muted);font-weight:400;font-size:13px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600}
td.loc,td.code,td.path{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:nowrap}
td.msg{word-break:break-word}td.path{white-space:normal;word-break:break-all;color:var(--muted)}
.sev{font-weight:600}.sev-error{color:var(--bad)}.sev-warning{color:var(--warn)}.sev-info{color:var(--info)}
.none{color:var(--muted);margin:4px 0 8px}
`;
