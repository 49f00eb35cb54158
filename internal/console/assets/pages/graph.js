// The children of a topic as a small SVG graph: the parent on the left,
// an edge to each child labelled with its lag.

const NS = 'http://www.w3.org/2000/svg';

function el(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function short(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

export function childrenGraph(parent, children) {
  const rowH = 34, W = 640, boxW = 180, boxH = 24;
  const H = Math.max(1, children.length) * rowH + 10;
  const root = el('svg', { viewBox: `0 0 ${W} ${H}`, class: 'graph', role: 'img', 'aria-label': 'Children of ' + parent, 'data-graph': 'children' });
  const py = H / 2;
  root.append(el('rect', { x: 4, y: py - boxH / 2, width: boxW, height: boxH, rx: 5, class: 'node parent' }));
  root.append(el('text', { x: 4 + boxW / 2, y: py + 4, 'text-anchor': 'middle' }, short(parent, 24)));
  children.forEach((c, i) => {
    const cy = 5 + i * rowH + rowH / 2;
    const x1 = 4 + boxW, x2 = W - boxW - 4;
    const stateBad = c.state && c.state !== 'running';
    root.append(el('path', { d: `M${x1} ${py} C${x1 + 80} ${py}, ${x2 - 80} ${cy}, ${x2} ${cy}`, class: 'edge' + (stateBad ? ' bad' : '') }));
    const label = 'lag ' + Number(c.lag_messages || 0).toLocaleString('en') + (c.delay_ms ? ' · delay' : '') + (c.filter ? ' · filter' : '') + (c.remote ? ' · ' + (c.state || 'remote') : '');
    root.append(el('text', { x: (x1 + x2) / 2, y: (py + cy) / 2 - 4, 'text-anchor': 'middle', class: 'label' }, label));
    root.append(el('rect', { x: x2, y: cy - boxH / 2, width: boxW, height: boxH, rx: 5, class: 'node' + (c.remote ? ' remote' : '') + (stateBad ? ' bad' : '') }));
    root.append(el('text', { x: x2 + boxW / 2, y: cy + 4, 'text-anchor': 'middle' }, short(c.name, 24)));
  });
  const wrap = document.createElement('div');
  wrap.className = 'scroll';
  wrap.append(root);
  return wrap;
}
