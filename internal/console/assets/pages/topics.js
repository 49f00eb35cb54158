import { api, allTopics, get, enc } from '../api.js';
import { h, clear, table, problem, note, num, rate, duration, age, oldestUnconsumed, topicLink, field } from '../ui.js';

const STATS_FOR = 50; // topics (after the search) whose figures are fetched

export async function render(main, params, ctx) {
  const q = ctx.query.get('q') || '';
  const search = h('input', { type: 'search', id: 'topic-search', placeholder: 'Search topics', value: q, 'aria-label': 'Search topics',
    oninput: () => { history.replaceState(null, '', '#/topics' + (search.value ? '?q=' + enc(search.value) : '')); draw(); } });
  const list = h('div', {});
  const createOut = h('div', {});
  const name = h('input', { name: 'name', id: 'create-name', required: true, pattern: '[A-Za-z0-9._\\-]{1,249}', placeholder: 'orders' });
  const parts = h('input', { name: 'partitions', id: 'create-partitions', type: 'number', min: 1, max: 108, value: 3 });
  const delay = h('input', { name: 'delivery_delay', id: 'create-delivery-delay', placeholder: 'none', size: 8 });
  const ordering = h('select', { name: 'ordering', id: 'create-ordering' },
    h('option', { value: '' }, 'default'), h('option', { value: 'none' }, 'none'), h('option', { value: 'group' }, 'by message group'));
  const create = h('details', { class: 'card' }, h('summary', {}, 'Create a topic'),
    h('form', { 'data-form': 'create-topic', class: 'row', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const body = { name: name.value, partitions: Number(parts.value) || 0 };
        // Optional: sent only when set, so a node without them still creates.
        if (delay.value.trim()) body.delivery_delay = delay.value.trim();
        if (ordering.value) body.ordering = ordering.value;
        const r = await api('POST', '/v1/topics', body);
        clear(createOut, note('Created ' + r.data.name + '.'), ' ', topicLink(r.data.name));
        name.value = '';
        delay.value = '';
        ordering.value = '';
        await refresh();
      } catch (e) {
        clear(createOut, problem(e));
      }
    } }, field('Name', name), field('Partitions', parts),
      field('Delivery delay', delay, '15m, 1h: each record waits'), field('Ordering', ordering), h('button', { type: 'submit', class: 'primary' }, 'Create')), createOut);
  clear(main, h('div', { class: 'headrow' }, h('h1', {}, 'Topics'), search), create, list);

  let all = [];
  const stats = new Map(); // name -> last sample
  const oldest = new Map(); // name -> commit time (ms) of its oldest unconsumed record
  function draw() {
    const term = search.value.trim().toLowerCase();
    const shown = all.filter((t) => !term || t.name.toLowerCase().includes(term));
    clear(list,
      h('p', { class: 'muted', 'data-count': String(shown.length) }, shown.length + ' of ' + all.length + ' topics' + (shown.length > STATS_FOR ? '; figures for the first ' + STATS_FOR : '')),
      table([
        ['Topic', (t) => topicLink(t.name)],
        ['Role', (t) => [h('span', { class: 'badge' }, t.role + (t.fanout_delay_ms ? ' (delay)' : '') + (t.remote ? ' (remote)' : '')),
          t.ordering === 'group' ? [' ', h('span', { class: 'badge', 'data-badge': 'grouped', title: 'ordering: group' }, 'grouped')] : null,
          t.delivery_delay_ms ? [' ', h('span', { class: 'badge', 'data-badge': 'delayed', title: 'delivery delay' }, 'delay ' + duration(t.delivery_delay_ms))] : null]],
        ['Partitions', (t) => num(t.partitions)],
        ['Backlog', (t) => num(stats.get(t.name)?.backlog)],
        ['Produce', (t) => rate(stats.get(t.name)?.produce_per_s)],
        ['Consume', (t) => rate(stats.get(t.name)?.consume_per_s)],
        ['Oldest unconsumed', (t) => age(oldest.get(t.name))],
        ['Retention', (t) => (t.retention_ms === 0 ? 'forever' : duration(t.retention_ms))],
        ['Owner', (t) => t.owner || '—'],
      ], shown, { name: 'topics', key: (t) => t.name, empty: all.length ? 'No topic matches.' : 'No topics yet.' }));
    return shown;
  }
  async function refresh() {
    all = await allTopics();
    const shown = draw();
    await Promise.all(shown.slice(0, STATS_FOR).map(async (t) => {
      try {
        const [hist, d] = await Promise.all([get('/v1/topics/' + enc(t.name) + '/stats/history'), get('/v1/topics/' + enc(t.name))]);
        stats.set(t.name, hist.samples[hist.samples.length - 1]);
        oldest.set(t.name, oldestUnconsumed(d.partition_stats));
      } catch { /* a topic gone meanwhile */ }
    }));
    if (ctx.alive()) draw();
  }
  await refresh();
  return { refresh };
}
