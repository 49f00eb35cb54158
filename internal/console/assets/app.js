// The console's shell: hash routing (every page has a URL: deep links and
// the back button work), the readiness banner, polling, sign-in state.

import { api, credentials, signOut, securityOff, ApiError } from './api.js';
import { h, clear, problem } from './ui.js';
import * as cluster from './pages/cluster.js';
import * as topics from './pages/topics.js';
import * as topic from './pages/topic.js';
import * as messages from './pages/messages.js';
import * as produce from './pages/produce.js';
import * as users from './pages/users.js';
import * as deadLetters from './pages/deadletters.js';
import * as login from './pages/login.js';

const POLL_MS = 3000;

// routes: a pattern of path segments (":x" captures) and its page.
const routes = [
  [['cluster'], cluster, 'cluster'],
  [['topics'], topics, 'topics'],
  [['topics', ':topic'], topic, 'topics'],
  [['topics', ':topic', 'messages'], messages, 'topics'],
  [['topics', ':topic', 'produce'], produce, 'topics'],
  [['users'], users, 'users'],
  [['dead-letters'], deadLetters, 'dead-letters'],
  [['login'], login, ''],
];

export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  const segs = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { segs, query: new URLSearchParams(query || '') };
}

export function go(path) {
  location.hash = '#/' + path.replace(/^\/+/, '');
}

function match(segs) {
  for (const [pattern, page, nav] of routes) {
    if (pattern.length !== segs.length) continue;
    const params = {};
    let ok = true;
    pattern.forEach((p, i) => {
      if (p.startsWith(':')) params[p.slice(1)] = segs[i];
      else if (p !== segs[i]) ok = false;
    });
    if (ok) return { page, params, nav };
  }
  return null;
}

let current = null; // {token, refresh}
let seq = 0;

async function render() {
  const { segs, query } = parseHash();
  if (segs.length === 0) return go('topics');
  const m = match(segs);
  const main = document.getElementById('main');
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (m && a.dataset.nav === m.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const token = ++seq;
  current = { token, refresh: null };
  if (!m) {
    clear(main, h('h1', {}, 'No such page'), h('p', {}, 'The console has no page at ', h('code', {}, location.hash), '. ', h('a', { href: '#/topics' }, 'Topics')));
    return;
  }
  const ctx = { query, alive: () => current && current.token === token, go };
  try {
    const page = await m.page.render(main, m.params, ctx);
    if (ctx.alive() && page && page.refresh) current.refresh = page.refresh;
    document.title = (main.querySelector('h1')?.textContent || 'Console') + ' · Narad';
  } catch (e) {
    if (!ctx.alive()) return;
    if (e instanceof ApiError && e.status === 401 && m.page !== login) {
      return go('login?next=' + encodeURIComponent(location.hash.slice(1)));
    }
    clear(main, h('h1', {}, 'Something went wrong'), problem(e));
  }
  await showWho(m.page === login);
  if (!ctx.alive()) return;
  if (document.activeElement === document.body || !main.contains(document.activeElement)) {
    if (!main.querySelector('[autofocus]')) main.focus({ preventScroll: true });
  }
}

// showWho says who is signed in, and offers to sign out only where that
// means something: not with security off (nobody signs in: every request
// may do everything), nor on the sign-in page itself.
async function showWho(onSignIn) {
  const c = credentials();
  const off = await securityOff();
  const who = document.getElementById('who');
  who.textContent = off ? 'Security off' : c ? 'Signed in as ' + c.user : '';
  who.title = off ? 'No credentials are checked: see docs/security.md' : '';
  document.getElementById('logout').hidden = !c || off === true || onSignIn;
}

// The banner: the node unreachable, or reachable but not ready.
async function checkNode() {
  const banner = document.getElementById('banner');
  let msg = '';
  let kind = '';
  try {
    const res = await fetch('/readyz', { cache: 'no-store', credentials: 'omit' });
    if (res.status !== 200) {
      const d = await res.json().catch(() => ({}));
      msg = 'This node is not ready: ' + (d.reason || 'status ' + res.status) + '. Figures may be missing or stale.';
      kind = 'not-ready';
    }
  } catch {
    msg = 'The node is unreachable. Retrying every few seconds; what is shown is from the last answer.';
    kind = 'unreachable';
  }
  banner.textContent = msg;
  banner.dataset.kind = kind;
  banner.hidden = !msg;
  return !msg;
}

async function tick() {
  const up = await checkNode();
  if (up && current && current.refresh && !document.hidden) {
    const token = current.token;
    try {
      await current.refresh();
    } catch (e) {
      if (current && current.token === token && e instanceof ApiError && e.status === 401) go('login');
    }
  }
  setTimeout(tick, POLL_MS);
}

window.addEventListener('hashchange', render);
document.getElementById('logout').addEventListener('click', () => {
  signOut();
  go('login');
});
render();
tick();
