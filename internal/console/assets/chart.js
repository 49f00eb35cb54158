// A tiny SVG line chart of its own (no library): a series of [t, v]
// points, drawn over the last 15 minutes, with its latest value as text.

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

export function chart(title, points, format, opts = {}) {
  const W = 300, H = 80, pad = 4;
  const fig = document.createElement('figure');
  fig.className = 'chart';
  fig.dataset.chart = opts.name || title;
  fig.dataset.points = String(points.length);
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, preserveAspectRatio: 'none' });
  const now = opts.now || Date.now();
  const from = now - (opts.windowMs || 900000);
  const max = Math.max(1, ...points.map((p) => p[1]));
  const x = (t) => pad + ((t - from) / (now - from)) * (W - 2 * pad);
  const y = (v) => H - pad - (v / max) * (H - 2 * pad);
  root.append(svg('line', { x1: pad, y1: H - pad, x2: W - pad, y2: H - pad, class: 'axis' }));
  if (points.length > 0) {
    const d = points.map((p, i) => (i ? 'L' : 'M') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1)).join(' ');
    if (points.length > 1) {
      const area = d + ` L${x(points[points.length - 1][0]).toFixed(1)} ${H - pad} L${x(points[0][0]).toFixed(1)} ${H - pad} Z`;
      root.append(svg('path', { d: area, class: 'area' }));
    }
    root.append(svg('path', { d, class: 'line' }));
    const last = points[points.length - 1];
    root.append(svg('circle', { cx: x(last[0]).toFixed(1), cy: y(last[1]).toFixed(1), r: 2.5, class: 'dot' }));
  }
  const last = points.length ? points[points.length - 1][1] : null;
  const cap = document.createElement('figcaption');
  const name = document.createElement('span');
  name.textContent = title;
  const val = document.createElement('strong');
  val.className = 'value';
  val.textContent = last === null ? '—' : format(last);
  cap.append(name, val);
  const peak = document.createElement('small');
  peak.className = 'muted';
  peak.textContent = 'peak ' + format(points.length ? Math.max(...points.map((p) => p[1])) : 0) + ' · 15 min';
  fig.append(cap, root, peak);
  return fig;
}
