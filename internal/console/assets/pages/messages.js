import { api, get, enc } from '../api.js';
import { h, clear, table, problem, num, when, due, field } from '../ui.js';

const VIEWS = ['json', 'text', 'hex'];

function b64bytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// bytesOf is the payload's bytes as far as the answer tells them (a JSON
// payload is re-serialised: its own spacing is not kept by JSON.parse).
function bytesOf(m) {
  if (m.payload_encoding === 'base64') return b64bytes(m.payload);
  if (m.payload_encoding === 'text') return new TextEncoder().encode(m.payload);
  return new TextEncoder().encode(JSON.stringify(m.payload));
}

export function showPayload(m, view) {
  if (view === 'hex') {
    const b = bytesOf(m);
    const lines = [];
    for (let i = 0; i < b.length && i < 4096; i += 16) {
      const row = Array.from(b.slice(i, i + 16));
      const hex = row.map((x) => x.toString(16).padStart(2, '0')).join(' ');
      const asc = row.map((x) => (x >= 32 && x < 127 ? String.fromCharCode(x) : '.')).join('');
      lines.push(i.toString(16).padStart(6, '0') + '  ' + hex.padEnd(48) + ' ' + asc);
    }
    if (b.length > 4096) lines.push('… ' + num(b.length) + ' bytes in all');
    return h('pre', { class: 'payload hex' }, lines.join('\n'));
  }
  if (m.payload_encoding === 'base64') {
    const text = new TextDecoder('utf-8', { fatal: false }).decode(b64bytes(m.payload));
    return h('pre', { class: 'payload' }, h('span', { class: 'badge' }, 'binary'), ' ', text);
  }
  if (m.payload_encoding === 'text') return h('pre', { class: 'payload' }, m.payload);
  if (view === 'text') return h('pre', { class: 'payload' }, JSON.stringify(m.payload));
  return h('pre', { class: 'payload json' }, JSON.stringify(m.payload, null, 2));
}

function showHeaders(m) {
  const hs = m.headers;
  if (!hs || (Array.isArray(hs) ? hs.length === 0 : Object.keys(hs).length === 0)) return h('span', { class: 'muted' }, '—');
  const pairs = Array.isArray(hs) ? hs.map((x) => [x.key ?? x.name, x.value]) : Object.entries(hs);
  return h('dl', { class: 'headers' }, pairs.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, typeof v === 'string' ? v : JSON.stringify(v)))));
}

export async function render(main, params, ctx) {
  const name = params.topic;
  const q = ctx.query;
  const p = Number(q.get('p') || 0);
  const o = Number(q.get('o') || 0);
  const n = Math.min(100, Math.max(1, Number(q.get('n') || 20)));
  const view = VIEWS.includes(q.get('view')) ? q.get('view') : 'json';
  const topic = await get('/v1/topics/' + enc(name));
  const ps = topic.partition_stats || [];
  const url = (pp, oo, vv = view) => 'topics/' + enc(name) + '/messages?p=' + pp + '&o=' + oo + '&n=' + n + '&view=' + vv;

  const part = h('select', { id: 'msg-partition', name: 'partition' },
    Array.from({ length: topic.partitions }, (_, i) => h('option', { value: i, selected: i === p }, String(i))));
  const off = h('input', { id: 'msg-offset', name: 'offset', type: 'number', min: 0, value: o });
  const views = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Payload view' },
    VIEWS.map((v) => h('a', { class: 'button' + (v === view ? ' active' : ''), href: '#/' + url(p, o, v), 'aria-pressed': String(v === view), 'data-view': v }, v.toUpperCase())));
  const out = h('div', { 'data-section': 'messages' });
  const stats = ps[p] || {};
  clear(main,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/topics' }, 'Topics'), ' / ', h('a', { href: '#/topics/' + enc(name) }, name), ' / messages'),
    h('h1', {}, 'Messages of ' + name),
    h('p', { class: 'muted' }, 'Replay reads records without leasing or settling them. Partition ' + p + ': offsets ' + num(stats.oldest_offset) + ' to ' + num(stats.high_watermark) + ' (exclusive).'),
    h('form', { class: 'row', 'data-form': 'replay', onsubmit: (ev) => { ev.preventDefault(); ctx.go(url(part.value, Number(off.value) || 0)); } },
      field('Partition', part), field('From offset', off), h('button', { type: 'submit', class: 'primary' }, 'Replay'), views),
    out);

  let r;
  try {
    r = await api('GET', '/v1/topics/' + enc(name) + '/consume?partition=' + p + '&offset=' + o + '&max=' + n);
  } catch (e) {
    if (e.status === 401) throw e;
    clear(out, problem(e));
    return;
  }
  const msgs = r.status === 204 ? [] : (r.data.messages || [r.data]);
  const last = msgs.length ? msgs[msgs.length - 1].offset : o - 1;
  // Scheduled records (deliver_at) get a Due column; a message id, when
  // the node gives one, goes under the offset.
  const scheduled = msgs.some((m) => m.deliver_at);
  clear(out,
    table([
      ['Offset', (m) => [h('strong', {}, num(m.offset)), m.id ? h('small', { class: 'msgid', 'data-id': m.id, title: 'message id' }, m.id) : null]],
      ['Committed', (m) => when(m.timestamp)],
      scheduled ? ['Due', (m) => due(m.deliver_at)] : null,
      ['Key', (m) => (m.key !== undefined ? h('code', {}, m.key) : m.key_base64 !== undefined ? h('code', {}, 'base64:' + m.key_base64) : h('span', { class: 'muted' }, '—'))],
      ['Headers', showHeaders],
      ['Payload', (m) => showPayload(m, view)],
    ].filter(Boolean), msgs, { name: 'messages', key: (m) => String(m.offset), empty: 'No records from offset ' + o + ' (below the oldest retained one, or at the high watermark).' }),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      o > 0 ? h('a', { class: 'button', href: '#/' + url(p, Math.max(0, o - n)), 'data-page': 'prev' }, '← Previous ' + n) : null,
      msgs.length === n ? h('a', { class: 'button', href: '#/' + url(p, last + 1), 'data-page': 'next' }, 'Next ' + n + ' →') : null));
}
