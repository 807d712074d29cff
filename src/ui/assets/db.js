// SPDX-License-Identifier: Apache-2.0
// db.js: the database inspector dialog, through the app's read-only
// inspector (the RPC routes under /api/db/).
'use strict';

// --- the database inspector ---------------------------------------------------------
function table(res) {
  const box = $('db-result'); box.textContent = '';
  const t = document.createElement('table');
  const hr = document.createElement('tr');
  for (const c of res.columns || []) { const th = document.createElement('th'); th.textContent = c.name + (c.type ? ' ' + c.type : ''); hr.append(th); }
  t.append(hr);
  for (const row of res.rows || []) {
    const tr = document.createElement('tr');
    for (const v of row) { const td = document.createElement('td'); if (v === null) { td.textContent = 'NULL'; td.className = 'null'; } else td.textContent = String(v); tr.append(td); }
    t.append(tr);
  }
  box.append(t);
  if (res.error) dbError(res.error);
}
function dbError(msg) { const e = $('db-error'); e.hidden = !msg; e.textContent = msg || ''; }
async function dbTables() {
  dbError('');
  const box = $('db-tables'); box.textContent = 'loading…';
  const r = await fetch('/api/db/tables'); const j = await r.json();
  box.textContent = '';
  if (!r.ok) { dbError(j.error); return; }
  if (j.error) dbError(j.error);
  for (const t of j.tables || []) {
    const d = document.createElement('div');
    d.className = 'db-table'; d.dataset.name = t.name;
    const a = document.createElement('span'); a.textContent = t.name;
    const b = document.createElement('span'); b.className = 'rows'; b.textContent = t.rows >= 0 ? t.rows : '?';
    d.append(a, b);
    d.onclick = async () => {
      dbError('');
      const rr = await fetch('/api/db/page?table=' + encodeURIComponent(t.name) + '&limit=200');
      const jj = await rr.json();
      if (!rr.ok) dbError(jj.error); else table(jj);
    };
    box.append(d);
  }
}
$('db').onclick = () => { $('dbdlg').showModal(); dbTables(); };
$('db-run').onclick = async () => {
  dbError('');
  const r = await post('/api/db/query', { sql: $('db-sql').value });
  if (!r.ok) { dbError(r.j.error || String(r.status)); $('db-result').textContent = ''; } else table(r.j);
};
