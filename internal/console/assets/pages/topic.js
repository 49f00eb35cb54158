import { api, get, enc } from '../api.js';
import { h, clear, table, problem, note, num, rate, duration, parseDuration, bytes, when, age, oldestUnconsumed, topicLink, field, confirmBox } from '../ui.js';
import { chart } from '../chart.js';
import { childrenGraph } from './graph.js';

// The settings a PATCH may change, with how they are shown.
const SETTINGS = [
  ['retention_ms', 'Retention', '0 keeps forever; else at least 1h'],
  ['visibility_timeout_ms', 'Visibility timeout', '1s .. 12h'],
  ['max_in_flight_per_partition', 'Max in flight per partition', '1 .. 1,000,000'],
  ['max_acked_ahead_per_partition', 'Max acked ahead per partition', '1 .. 1,000,000'],
  ['dedupe_window_ms', 'Dedupe window', '0: no idempotent produce; else 1s .. 1d'],
  ['max_deliveries', 'Max deliveries', '0: no dead-letter policy'],
  ['dead_letter_topic', 'Dead-letter topic', 'where records past max deliveries go'],
  ['delivery_delay_ms', 'Delivery delay', '0: due at once; else each record waits this long (≤ 1 year)'],
  ['ordering', 'Ordering', '"group": records of one key offered in order, none while an earlier one is leased'],
];
const ORDERINGS = ['none', 'group'];
// The settings in milliseconds: shown as durations ("7d", as the CLI
// prints them), typed as a duration or a bare number of milliseconds.
const DURATIONS = new Set(['retention_ms', 'visibility_timeout_ms', 'dedupe_window_ms', 'delivery_delay_ms']);

// scheduledTotal sums the partitions' scheduled records (undefined when
// no partition reports any: the field is absent when 0).
function scheduledTotal(ps) {
  const s = (ps || []).filter((p) => p.scheduled !== undefined);
  return s.length ? s.reduce((a, p) => a + p.scheduled, 0) : undefined;
}

export async function render(main, params, ctx) {
  const name = params.topic;
  const base = '/v1/topics/' + enc(name);
  const head = h('div', {});
  const charts = h('div', { class: 'charts', 'data-section': 'charts' });
  const parts = h('div', { 'data-section': 'partitions' });
  const kids = h('div', { 'data-section': 'children' });
  // The filter editor sits outside kids: the refresh redraws kids, not it.
  const filterEdit = h('div', { 'data-section': 'child-filter' });
  const settingsOut = h('div', {});
  const actionsOut = h('div', {});
  const settingsForm = h('form', { class: 'settings', 'data-form': 'settings' });
  const schemaBox = h('div', {});
  let topic = await get(base); // a 404 or 401 goes to the shell

  const purgeBtn = h('button', { type: 'button', class: 'danger', 'data-action': 'purge', onclick: () => {
    if (actionsOut.querySelector('.confirm')) return;
    actionsOut.replaceChildren(confirmBox('Purge ' + name + '? Every record below each high watermark is settled (the log keeps them for replay).', 'Yes, purge', async (box) => {
      try {
        const r = await api('POST', base + '/purge');
        clear(actionsOut, note('Purged ' + num(r.data.purged) + ' records.'));
        await refresh();
      } catch (e) {
        box.replaceWith(problem(e));
      }
    }));
  } }, 'Purge…');

  clear(main,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/topics' }, 'Topics'), ' / ', name),
    h('div', { class: 'headrow' }, h('h1', {}, name),
      h('div', { class: 'actions' },
        h('a', { class: 'button', href: '#/topics/' + enc(name) + '/messages' }, 'Browse messages'),
        h('a', { class: 'button', href: '#/topics/' + enc(name) + '/produce' }, 'Produce'),
        purgeBtn)),
    actionsOut, head,
    h('h2', {}, 'Last 15 minutes'), charts,
    h('h2', {}, 'Partitions'), parts,
    h('h2', {}, 'Children'), kids, filterEdit,
    h('h2', {}, 'Settings'), settingsForm, settingsOut,
    h('h2', {}, 'Schema'), schemaBox);

  function drawSettings() {
    const inputs = {};
    // ordering is offered only by a node that reports it.
    const shown = SETTINGS.filter(([key]) => key !== 'ordering' || topic.ordering !== undefined);
    const rows = shown.map(([key, label, hint]) => {
      if (key === 'ordering') {
        inputs[key] = h('select', { name: key, id: 'set-ordering' }, ORDERINGS.map((o) => h('option', { value: o, selected: o === topic.ordering }, o)));
        return field(label, inputs[key], hint);
      }
      const text = key === 'dead_letter_topic';
      const v = topic[key];
      if (DURATIONS.has(key)) {
        inputs[key] = h('input', { name: key, id: 'set-' + key, type: 'text', size: 10, spellcheck: false, 'data-duration': '',
          value: duration(v ?? 0), title: 'a duration (30s, 1h30m, 7d) or milliseconds' });
        return field(label, inputs[key], hint);
      }
      const input = h('input', { name: key, id: 'set-' + key, type: text ? 'text' : 'number', min: text ? undefined : 0,
        value: v === undefined || v === null ? (text ? '' : 0) : String(v) });
      inputs[key] = input;
      return field(label, input, hint);
    });
    clear(settingsForm, h('div', { class: 'formgrid' }, rows),
      h('button', { type: 'submit', class: 'primary' }, 'Save settings'));
    settingsForm.onsubmit = async (ev) => {
      ev.preventDefault();
      const patch = {};
      try {
        for (const [key] of shown) {
          const textual = key === 'dead_letter_topic' || key === 'ordering';
          const was = topic[key] ?? (textual ? '' : 0);
          const now = textual ? inputs[key].value.trim() : DURATIONS.has(key) ? parseDuration(inputs[key].value) : Number(inputs[key].value);
          if (String(now) !== String(was)) patch[key] = now;
        }
      } catch (e) {
        return clear(settingsOut, problem(e));
      }
      if (Object.keys(patch).length === 0) return clear(settingsOut, note('Nothing changed.'));
      try {
        const r = await api('PATCH', base, patch);
        // The answer is the whole record (fields at their default are
        // absent from it, so it replaces rather than merges), less stats.
        topic = { ...r.data, partition_stats: r.data.partition_stats || topic.partition_stats };
        clear(settingsOut, note('Saved: ' + Object.keys(patch).join(', ') + '.'));
        drawSettings();
      } catch (e) {
        clear(settingsOut, problem(e));
      }
    };
  }

  function drawHead() {
    const facts = [
      ['Role', topic.role + (topic.parent ? ' of ' : ''), topic.parent ? topicLink(topic.parent) : null],
      ['Partitions', num(topic.partitions)],
      ['Owner', topic.owner || '—'],
      ['Oldest unconsumed', age(oldestUnconsumed(topic.partition_stats))],
      ['Created', when(topic.created_at)],
      ['Modified', when(topic.modified_at || topic.created_at)],
      ['Retention', topic.retention_ms === 0 ? 'forever' : duration(topic.retention_ms)],
    ];
    if (topic.fanout_delay_ms) facts.push(['Delay', duration(topic.fanout_delay_ms)]);
    if (topic.delivery_delay_ms) facts.push(['Delivery delay', h('span', { 'data-fact': 'delivery-delay', 'data-ms': String(topic.delivery_delay_ms) }, duration(topic.delivery_delay_ms))]);
    if (topic.ordering) facts.push(['Ordering', h('span', { 'data-fact': 'ordering' }, topic.ordering === 'group' ? 'by message group' : topic.ordering)]);
    const sched = scheduledTotal(topic.partition_stats);
    if (sched !== undefined) facts.push(['Scheduled', h('span', { 'data-fact': 'scheduled', title: 'records scheduled for later and not due yet' }, num(sched))]);
    if (topic.dead_letter_topic) facts.push(['Dead letters to', topicLink(topic.dead_letter_topic), ' after ' + topic.max_deliveries + ' deliveries']);
    if (topic.remote) facts.push(['Remote', topic.remote.url + ' → ' + topic.remote.topic]);
    const tags = Object.keys(topic.tags || {}).sort();
    if (tags.length) facts.push(['Tags', h('span', { 'data-fact': 'tags' }, tags.map((k) => k + '=' + topic.tags[k]).join(', '))]);
    clear(head, h('dl', { class: 'facts' }, facts.map(([k, ...v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v)))));
    clear(schemaBox, topic.schema ? h('pre', { class: 'code' }, JSON.stringify(topic.schema, null, 2)) : h('p', { class: 'muted' }, 'No schema: any payload is accepted.'));
  }

  function drawParts() {
    const ps = topic.partition_stats || [];
    // Scheduled shows when a partition reports it (absent when 0).
    const sched = scheduledTotal(ps) !== undefined;
    // In sync shows for a replicated topic: a partition with fewer copies
    // in sync than listed (a follower catching up, a copy on a dead node,
    // a copy being re-created elsewhere) is under-replicated.
    const replicated = ps.some((p) => (p.replicas || []).length > 1);
    clear(parts, table([
      ['#', (p) => p.index],
      ['Owner', (p) => p.owner_node || '—'],
      replicated ? ['In sync', (p) => inSyncCell(p)] : null,
      ['State', (p) => (p.available === false ? h('span', { class: 'badge bad', title: p.error || '' }, 'unavailable') : h('span', { class: 'badge good' }, 'ok'))],
      ['High watermark', (p) => num(p.high_watermark)],
      ['Frontier', (p) => num(p.consumer_frontier)],
      ['In flight', (p) => num(p.in_flight)],
      ['Backlog', (p) => (p.high_watermark === undefined ? '—' : num(Math.max(0, p.high_watermark - p.consumer_frontier)))],
      ['Oldest unconsumed', (p) => age(p.oldest_unconsumed_at_ms)],
      ['Oldest offset', (p) => num(p.oldest_offset)],
      ['Size', (p) => bytes(p.size_bytes)],
      sched ? ['Scheduled', (p) => h('span', { 'data-scheduled': String(p.scheduled ?? 0) }, num(p.scheduled ?? 0))] : null,
      ['', (p) => h('a', { href: '#/topics/' + enc(name) + '/messages?p=' + p.index + '&o=' + (p.oldest_offset ?? 0) }, 'messages')],
    ].filter(Boolean), ps, { name: 'partitions', key: (p) => String(p.index), empty: 'No partitions here (a remote child has none).' }),
    ps.some((p) => p.error) ? ps.filter((p) => p.error).map((p) => h('p', { class: 'problem' }, 'Partition ' + p.index + ': ' + p.error)) : null);
  }

  async function drawChildren() {
    if (!(topic.children || []).length) {
      clear(kids, h('p', { class: 'muted' }, topic.role === 'child' ? 'A child has no children of its own.' : 'No children attached.'));
      return;
    }
    let list;
    try {
      list = await get(base + '/children');
    } catch (e) {
      clear(kids, problem(e));
      return;
    }
    const cs = list.children || [];
    clear(kids, childrenGraph(name, cs), table([
      ['Child', (c) => (c.remote ? h('span', {}, c.name) : topicLink(c.name))],
      ['Kind', (c) => (c.remote ? 'remote: ' + c.remote.url + ' → ' + c.remote.topic : c.delay_ms ? 'delay ' + duration(c.delay_ms) : 'local')],
      ['State', (c) => h('span', { class: 'badge' + (c.state && c.state !== 'running' ? ' bad' : ' good'), title: c.state_reason || '' }, c.state || 'running')],
      ['Lag', (c) => num(c.lag_messages) + (c.lag_complete === false ? ' (incomplete)' : '')],
      ['Due lag', (c) => (c.due_lag_seconds === undefined ? '—' : c.due_lag_seconds.toFixed(1) + ' s')],
      ['Dropped', (c) => num(c.dropped_messages)],
      ['Filter', (c) => h('div', { 'data-filter': c.filter ? 'set' : 'none' },
        c.filter ? [h('pre', { class: 'code' }, JSON.stringify(c.filter, null, 2)), h('span', { class: 'badge', 'data-scope': c.filter_scope || 'headers' }, 'matches ' + (c.filter_scope || 'headers'))]
          : h('span', { class: 'muted', title: 'the link copies every record' }, 'none'),
        ' ', h('button', { type: 'button', class: 'small', 'data-action': 'edit-filter', onclick: () => editFilter(c) }, c.filter ? 'Edit' : 'Set filter…'))],
      ['Filtered', (c) => h('span', { 'data-filtered': String(c.filtered ?? 0), title: 'records the filter did not match (counted by this node since it started)' }, c.filter || c.filtered ? num(c.filtered ?? 0) : '—')],
    ], cs, { name: 'children', key: (c) => c.name }));
  }

  // editFilter opens the filter editor of one link below the children:
  // the policy as JSON, its scope; save (PATCH) or remove (filter null).
  function editFilter(c) {
    const out = h('div', {});
    const text = h('textarea', { id: 'filter-json', name: 'filter', rows: 6, spellcheck: false, placeholder: '{"region": [{"prefix": "eu-"}]}' },
      c.filter ? JSON.stringify(c.filter, null, 2) : '');
    const scope = h('select', { id: 'filter-scope', name: 'filter_scope' },
      ['headers', 'payload'].map((v) => h('option', { value: v, selected: v === (c.filter_scope || 'headers') }, v)));
    const patch = async (body, done) => {
      try {
        await api('PATCH', base + '/children/' + enc(c.name), body);
        clear(filterEdit, note(done));
        await drawChildren();
      } catch (e) {
        clear(out, problem(e));
      }
    };
    clear(filterEdit, h('form', { class: 'card', 'data-form': 'child-filter', 'data-child': c.name, onsubmit: async (ev) => {
      ev.preventDefault();
      let filter;
      try {
        filter = JSON.parse(text.value);
      } catch (e) {
        return clear(out, problem(new Error('the filter is not JSON: ' + e.message)));
      }
      await patch({ filter, filter_scope: scope.value }, 'Saved the filter of ' + c.name + '.');
    } },
    h('h3', {}, 'Filter of ' + c.name),
    field('Filter policy (JSON)', text, 'An Amazon SNS filter policy: the link copies only the records it matches; records already read keep the filter they were read with.'),
    h('div', { class: 'row' }, field('Matches', scope),
      h('button', { type: 'submit', class: 'primary' }, 'Save filter'),
      c.filter ? h('button', { type: 'button', class: 'danger', 'data-action': 'clear-filter', onclick: () => patch({ filter: null }, 'Removed the filter of ' + c.name + '.') }, 'Remove filter') : null,
      h('button', { type: 'button', onclick: () => filterEdit.replaceChildren() }, 'Cancel')),
    out));
    text.focus();
  }

  async function drawCharts() {
    let hist;
    try {
      hist = await get(base + '/stats/history');
    } catch (e) {
      clear(charts, problem(e));
      return;
    }
    const s = hist.samples || [];
    const pick = (k) => s.filter((x) => x[k] !== undefined && x[k] !== null).map((x) => [x.at_ms, x[k]]);
    const now = s.length ? s[s.length - 1].at_ms : Date.now();
    clear(charts,
      chart('Produce rate', pick('produce_per_s'), rate, { name: 'produce', now, windowMs: hist.window_ms }),
      chart('Consume rate', pick('consume_per_s'), rate, { name: 'consume', now, windowMs: hist.window_ms }),
      chart('Backlog', pick('backlog'), num, { name: 'backlog', now, windowMs: hist.window_ms }));
  }

  async function refresh() {
    topic = await get(base);
    if (!ctx.alive()) return;
    drawHead();
    drawParts();
    await Promise.all([drawChildren(), drawCharts()]);
  }
  drawHead();
  drawParts();
  drawSettings();
  await Promise.all([drawChildren(), drawCharts()]);
  return { refresh };
}

// inSyncCell is a replicated partition's in-sync copies out of its
// replicas, marked when fewer.
function inSyncCell(p) {
  const all = (p.replicas || []).length, ok = (p.in_sync || []).length;
  const title = 'replicas ' + (p.replicas || []).join(', ') + '; in sync ' + ((p.in_sync || []).join(', ') || 'none');
  if (all === 0) return '—';
  if (ok < all) return h('span', { class: 'badge bad', 'data-in-sync': ok + '/' + all, title }, ok + ' of ' + all + ': under-replicated');
  return h('span', { class: 'badge good', 'data-in-sync': ok + '/' + all, title }, ok + ' of ' + all);
}
