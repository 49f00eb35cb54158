import { api, allTopics, get, enc } from '../api.js';
import { h, clear, problem, note, num, topicLink, field, confirmBox } from '../ui.js';
import { showPayload } from './messages.js';

const PEEK = 5; // records shown of each dead-letter topic

export async function render(main) {
  const body = h('div', {});
  clear(main, h('h1', {}, 'Dead letters'),
    h('p', { class: 'muted' }, 'Topics named as another topic\'s dead_letter_topic: records that reached max_deliveries. Redrive moves the unconsumed ones back (needs consume here and produce there); purge settles them all (owner or admin).'),
    body);
  const said = new Map(); // dead-letter topic -> the last outcome shown, kept across refreshes

  async function refresh() {
    const topics = await allTopics();
    const sources = new Map();
    for (const t of topics) {
      if (t.dead_letter_topic) {
        if (!sources.has(t.dead_letter_topic)) sources.set(t.dead_letter_topic, []);
        sources.get(t.dead_letter_topic).push(t);
      }
    }
    if (sources.size === 0) {
      clear(body, h('p', { class: 'muted', 'data-empty': 'dead-letters' }, 'No topic has a dead-letter topic. Set max_deliveries and dead_letter_topic in a topic\'s settings.'));
      return;
    }
    if (body.querySelector('.confirm, input:focus, select:focus')) return; // mid-action: leave it be
    const cards = [];
    for (const [dlq, from] of [...sources.entries()].sort()) cards.push(await card(dlq, from));
    clear(body, cards);
  }

  async function card(dlq, from) {
    const out = h('div', { 'data-outcome': dlq });
    if (said.has(dlq)) out.append(said.get(dlq));
    const tell = (node) => { said.set(dlq, node); clear(out, node); };
    const box = h('section', { class: 'card', 'data-dlq': dlq, 'aria-label': 'Dead-letter topic ' + dlq });
    let d;
    try {
      d = await get('/v1/topics/' + enc(dlq));
    } catch (e) {
      clear(box, h('h2', {}, dlq), problem(e));
      return box;
    }
    const ps = d.partition_stats || [];
    const backlog = ps.reduce((s, p) => s + Math.max(0, (p.high_watermark || 0) - (p.consumer_frontier || 0)), 0);
    const peek = [];
    for (const p of ps) {
      if (peek.length >= PEEK || p.high_watermark === undefined || p.consumer_frontier >= p.high_watermark) continue;
      try {
        const r = await api('GET', '/v1/topics/' + enc(dlq) + '/consume?partition=' + p.index + '&offset=' + p.consumer_frontier + '&max=' + (PEEK - peek.length));
        if (r.status === 200) peek.push(...(r.data.messages || [r.data]));
      } catch { /* shown by the counts */ }
    }
    const to = h('select', { name: 'to', 'aria-label': 'Redrive to' }, from.map((t) => h('option', { value: t.name }, t.name)));
    const redrive = h('button', { type: 'button', class: 'primary', 'data-action': 'redrive', onclick: async () => {
      try {
        const r = await api('POST', '/v1/topics/' + enc(dlq) + '/redrive', { to: to.value });
        tell(note('Redrove ' + num(r.data.moved) + ' records to ' + to.value + '.'));
      } catch (e) {
        tell(problem(e));
      }
      await refresh();
    } }, 'Redrive');
    const purge = h('button', { type: 'button', class: 'danger', 'data-action': 'purge', onclick: () => {
      if (out.querySelector('.confirm')) return;
      out.replaceChildren(confirmBox('Purge every record of ' + dlq + '? They are settled and will not be redriven.', 'Yes, purge', async (cb) => {
        try {
          const r = await api('POST', '/v1/topics/' + enc(dlq) + '/purge');
          tell(note('Purged ' + num(r.data.purged) + ' records.'));
          await refresh();
        } catch (e) {
          tell(problem(e));
        }
      }));
    } }, 'Purge…');
    clear(box,
      h('div', { class: 'headrow' }, h('h2', {}, topicLink(dlq)),
        h('span', { class: 'badge' + (backlog ? ' bad' : ' good'), 'data-backlog': String(backlog) }, num(backlog) + ' waiting')),
      h('p', {}, 'Dead letters of ', from.map((t, i) => [i ? ', ' : '', topicLink(t.name), ' (after ' + t.max_deliveries + ' deliveries)'])),
      peek.length ? h('ol', { class: 'peek' }, peek.map((m) => h('li', {},
        h('span', { class: 'muted' }, 'p' + m.partition + '@' + m.offset + ' '),
        m.headers && m.headers['narad-dlq-reason'] ? h('span', { class: 'badge' }, m.headers['narad-dlq-reason']) : null,
        showPayload(m, 'text')))) : null,
      h('div', { class: 'row' }, field('Redrive to', to), redrive, purge,
        h('a', { class: 'button', href: '#/topics/' + enc(dlq) + '/messages' }, 'Browse')),
      out);
    return box;
  }

  await refresh();
  return { refresh };
}
