import { get } from '../api.js';
import { h, clear, table, problem, num, ago, topicLink } from '../ui.js';

function role(m) {
  if (m.leader) return h('span', { class: 'badge good' }, 'leader');
  if (m.voter === false) return h('span', { class: 'badge' }, 'non-voter');
  return h('span', { class: 'badge' }, 'follower');
}

export async function render(main) {
  const body = h('div', {});
  clear(main, h('h1', {}, 'Cluster'), body);
  async function refresh() {
    let members, moves, ready;
    try {
      [members, moves] = await Promise.all([get('/v1/cluster/members'), get('/v1/cluster/moves')]);
    } catch (e) {
      if (e.status === 401) throw e;
      clear(body, problem(e), h('p', { class: 'muted' }, 'The cluster pages need admin on every topic (admin:*).'));
      return;
    }
    ready = await fetch('/readyz', { cache: 'no-store' }).then((r) => r.json()).catch(() => ({}));
    const ms = members.members || [];
    const total = ms.reduce((s, m) => s + (m.partitions || 0), 0);
    clear(body,
      h('div', { class: 'tiles' },
        h('div', { class: 'tile' }, h('span', {}, 'Nodes'), h('strong', { 'data-stat': 'nodes' }, num(ms.length))),
        h('div', { class: 'tile' }, h('span', {}, 'Leader'), h('strong', { 'data-stat': 'leader' }, (ms.find((m) => m.leader) || {}).id || '—')),
        h('div', { class: 'tile' }, h('span', {}, 'Partitions'), h('strong', {}, num(total))),
        h('div', { class: 'tile' }, h('span', {}, 'Moves in flight'), h('strong', { 'data-stat': 'moves' }, num((moves.moves || []).length))),
        h('div', { class: 'tile' }, h('span', {}, 'This node'), h('strong', {}, ready.status || '—'))),
      h('h2', {}, 'Nodes'),
      table([
        ['Node', (m) => h('strong', {}, m.id)],
        ['Raft role', role],
        ['State', (m) => h('span', { class: 'badge' + (m.state === 'active' || m.state === 'alive' ? ' good' : '') }, m.state || '—')],
        ['Partitions', (m) => bar(m.partitions || 0, total)],
        ['Heartbeat', (m) => ago(m.last_heartbeat_ms)],
        ['Draining', (m) => (m.draining ? 'yes' : 'no')],
        ['HTTP', (m) => m.http_addr || '—'],
        ['Raft', (m) => m.raft_addr || '—'],
      ], ms, { name: 'members', key: (m) => m.id }),
      h('h2', {}, 'Moves in flight'),
      table([
        ['Topic', (m) => topicLink(m.topic)],
        ['Partition', (m) => m.partition],
        ['From', (m) => m.from],
        ['To', (m) => m.to],
      ], moves.moves || [], { name: 'moves', empty: 'No partition is moving.' }));
  }
  await refresh();
  return { refresh };
}

function bar(n, total) {
  const pct = total ? Math.round((n / total) * 100) : 0;
  const meter = h('meter', { min: 0, max: total || 1, value: n, 'aria-label': pct + '% of partitions' });
  return h('span', { class: 'barcell' }, meter, ' ', num(n));
}
