import { api, get, enc } from '../api.js';
import { h, clear, problem, note, field } from '../ui.js';

export async function render(main, params) {
  const name = params.topic;
  const topic = await get('/v1/topics/' + enc(name));
  const key = h('input', { id: 'produce-key', name: 'key', placeholder: 'optional' });
  const part = h('select', { id: 'produce-partition', name: 'partition' }, h('option', { value: '' }, 'by key, or in rotation'),
    Array.from({ length: topic.partitions }, (_, i) => h('option', { value: i }, String(i))));
  const msgId = h('input', { id: 'produce-msgid', name: 'msg_id', placeholder: 'optional (idempotent produce)' });
  const hdrs = h('input', { id: 'produce-headers', name: 'headers', placeholder: 'trace-id=abc, tenant=eu' });
  const delay = h('input', { id: 'produce-delay', name: 'delay', placeholder: 'optional: 90s, 15m, 7d' });
  const at = h('input', { id: 'produce-deliver-at', name: 'deliver_at', placeholder: 'optional: 2030-01-02T15:04:05Z or Unix ms' });
  const body = h('textarea', { id: 'produce-payload', name: 'payload', rows: 8, required: true, spellcheck: false }, '{"hello": "world"}');
  const out = h('div', {});
  const form = h('form', { class: 'card', 'data-form': 'produce', onsubmit: async (ev) => {
    ev.preventDefault();
    let qs = [];
    if (key.value) qs.push('key=' + enc(key.value));
    if (part.value !== '') qs.push('partition=' + part.value);
    const headers = {};
    if (msgId.value) headers['Narad-Msg-Id'] = msgId.value;
    // Both set is the node's 400 to explain, as is a malformed value.
    if (delay.value.trim()) headers['Narad-Delay'] = delay.value.trim();
    if (at.value.trim()) headers['Narad-Deliver-At'] = at.value.trim();
    for (const pair of hdrs.value.split(',').map((x) => x.trim()).filter(Boolean)) {
      const i = pair.indexOf('=');
      if (i < 1) return clear(out, problem(new Error('header "' + pair + '" is not name=value')));
      headers['Narad-Header-' + pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
    }
    try {
      const r = await api('POST', '/v1/topics/' + enc(name) + '/produce' + (qs.length ? '?' + qs.join('&') : ''), body.value, { raw: true, contentType: 'application/octet-stream', headers });
      const later = headers['Narad-Delay'] || headers['Narad-Deliver-At'];
      clear(out, note('Accepted (' + r.status + '): the record is durable on the node' + (later ? ', scheduled: consumers are offered it once due.' : '.')), ' ', h('a', { href: '#/topics/' + enc(name) + '/messages' }, 'Browse messages'));
    } catch (e) {
      clear(out, problem(e));
    }
  } },
  h('div', { class: 'formgrid' }, field('Key', key), field('Partition', part), field('Message id', msgId), field('Headers', hdrs, 'name=value, … (sent as Narad-Header-*)'),
    field('Delay', delay, 'scheduled delivery: due this long after it is accepted (Narad-Delay)'),
    field('Deliver at', at, 'or due at this time: RFC 3339 or Unix ms (Narad-Deliver-At)')),
  field('Payload', body, topic.schema ? 'This topic has a schema: the payload must be JSON valid against it.' : 'Sent as the raw body: JSON, text or anything else.'),
  h('button', { type: 'submit', class: 'primary' }, 'Produce'), out);
  clear(main,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/topics' }, 'Topics'), ' / ', h('a', { href: '#/topics/' + enc(name) }, name), ' / produce'),
    h('h1', {}, 'Produce to ' + name), form);
}
