// Small DOM helpers: every page builds its elements with h(), never with
// innerHTML, so a topic name or a payload is always text, never markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// table builds a scrollable table: cols are [header, cell(row)].
export function table(cols, rows, opts = {}) {
  const t = h('table', { class: 'grid' + (opts.class ? ' ' + opts.class : ''), 'data-table': opts.name },
    h('thead', {}, h('tr', {}, cols.map(([head]) => h('th', { scope: 'col' }, head)))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: cols.length, class: 'muted' }, opts.empty || 'Nothing here.'))
      : rows.map((r) => h('tr', { 'data-row': opts.key ? opts.key(r) : undefined }, cols.map(([, cell]) => h('td', {}, cell(r)))))));
  return h('div', { class: 'scroll' }, t);
}

// problem shows an API error where the action was; a 403 says so in words.
export function problem(e) {
  const status = e && e.status ? e.status : 0;
  let lead = 'Error';
  if (status === 403) lead = 'Not allowed (403)';
  else if (status === 401) lead = 'Not signed in (401)';
  else if (status === 404) lead = 'Not found (404)';
  else if (status) lead = 'Error ' + status;
  return h('p', { class: 'problem', role: 'alert', 'data-status': String(status) }, h('strong', {}, lead + ': '), e.message || String(e));
}

export function note(text) {
  return h('p', { class: 'ok', role: 'status' }, text);
}

export function num(n) {
  if (n === undefined || n === null) return '—';
  return Number(n).toLocaleString('en');
}

export function rate(n) {
  if (n === undefined || n === null) return '—';
  return (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) + '/s';
}

export function bytes(n) {
  if (n === undefined || n === null) return '—';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + u[i];
}

// duration prints milliseconds as the CLI does (internal/duration.Format):
// whole days, hours and minutes, zero units left out, then what is left
// below a minute as Go prints it: "7d", "1d12h", "1h30m", "45s", "1.5s",
// "250ms"; 0 is "0s".
export function duration(ms) {
  if (ms === undefined || ms === null) return '—';
  if (ms === 0) return '0s';
  let out = ms < 0 ? '-' : '';
  let u = Math.abs(ms);
  for (const [size, unit] of [[86400000, 'd'], [3600000, 'h'], [60000, 'm']]) {
    const n = Math.floor(u / size);
    if (n > 0) {
      out += n + unit;
      u -= n * size;
    }
  }
  if (u >= 1000) out += +(u / 1000).toFixed(9) + 's';
  else if (u >= 1) out += +u.toFixed(6) + 'ms';
  else if (u > 0) out += +(u * 1000).toFixed(3) + 'µs';
  return out;
}

const UNIT_MS = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };

// parseDuration reads what the CLI's flags take (internal/duration,
// ParseMillis): a bare integer is milliseconds, anything else a duration
// such as "7d", "1h30m", "1.5s", optionally signed. It returns whole
// milliseconds and throws on anything else.
export function parseDuration(text) {
  const s = String(text).trim();
  if (/^[+-]?\d+$/.test(s)) return Number(s);
  const m = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))+)$/.exec(s);
  if (!m) throw new Error('"' + s + '" is not a duration (want e.g. 30s, 12h, 7d, or milliseconds)');
  let v = 0;
  for (const [, n, unit] of m[2].matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g)) v += Number(n) * UNIT_MS[unit];
  const whole = Math.round(v);
  if (Math.abs(v - whole) > 1e-6) throw new Error('"' + s + '" is not a whole number of milliseconds');
  return m[1] === '-' ? -whole : whole;
}

export function ago(unixMs) {
  if (!unixMs) return '—';
  const s = Math.max(0, Math.round((Date.now() - unixMs) / 1000));
  if (s < 120) return s + ' s ago';
  if (s < 7200) return Math.round(s / 60) + ' min ago';
  return Math.round(s / 3600) + ' h ago';
}

// age is how long ago unixMs was, as a duration ("—" when absent), in an
// element carrying the instant (data-at-ms) and the full time as its title.
export function age(unixMs) {
  if (!unixMs) return h('span', { class: 'muted' }, '—');
  const s = Math.max(0, Math.round((Date.now() - unixMs) / 1000));
  let text = s + ' s';
  if (s >= 172800) text = Math.round(s / 86400) + ' d';
  else if (s >= 7200) text = Math.round(s / 3600) + ' h';
  else if (s >= 120) text = Math.round(s / 60) + ' min';
  return h('span', { 'data-at-ms': String(unixMs), title: new Date(unixMs).toISOString() }, text);
}

// due is a scheduled record's due time (Unix ms) as a local time and how
// far off it is ("due in 5 min", "was due 3 s ago"), in an element
// carrying the instant (data-due-ms) and the UTC time as its title.
export function due(unixMs) {
  if (!unixMs) return h('span', { class: 'muted' }, '—');
  const d = unixMs - Date.now();
  const s = Math.round(Math.abs(d) / 1000);
  let span = s + ' s';
  if (s >= 172800) span = Math.round(s / 86400) + ' d';
  else if (s >= 7200) span = Math.round(s / 3600) + ' h';
  else if (s >= 120) span = Math.round(s / 60) + ' min';
  return h('span', { class: 'due', 'data-due-ms': String(unixMs), title: new Date(unixMs).toISOString() },
    new Date(unixMs).toLocaleString(), ' ', h('small', { class: d > 0 ? 'badge' : 'muted' }, d > 0 ? 'due in ' + span : 'was due ' + span + ' ago'));
}

// oldestUnconsumed is the earliest oldest_unconsumed_at_ms of a topic's
// partitions (undefined when none has one).
export function oldestUnconsumed(partitionStats) {
  const ts = (partitionStats || []).map((p) => p.oldest_unconsumed_at_ms).filter((v) => v);
  return ts.length ? Math.min(...ts) : undefined;
}

export function when(unixSeconds) {
  if (!unixSeconds) return '—';
  return new Date(unixSeconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function topicLink(name, sub = '') {
  return h('a', { href: '#/topics/' + encodeURIComponent(name) + sub }, name);
}

export function field(label, input, hint) {
  return h('label', { class: 'field' }, h('span', {}, label), input, hint ? h('small', { class: 'muted' }, hint) : null);
}

// confirmBox replaces a button with an in-page confirmation (no
// window.confirm: it blocks the page and cannot be styled or tabbed).
export function confirmBox(question, yesLabel, onYes) {
  const box = h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': question });
  const yes = h('button', { type: 'button', class: 'danger', 'data-action': 'confirm', onclick: async () => { yes.disabled = true; await onYes(box); } }, yesLabel);
  const no = h('button', { type: 'button', onclick: () => box.remove() }, 'Cancel');
  box.append(h('p', {}, question), yes, ' ', no);
  setTimeout(() => no.focus(), 0);
  return box;
}
