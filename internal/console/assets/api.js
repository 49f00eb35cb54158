// The console's only way to the node: the public /v1 API, with the
// viewer's own credentials (HTTP Basic), kept in sessionStorage: they
// last as long as the tab, and no other origin can read them.

const KEY = 'narad.console.credentials';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function credentials() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) || 'null');
  } catch {
    return null;
  }
}

export function signIn(user, password) {
  sessionStorage.setItem(KEY, JSON.stringify({ user, password }));
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

function basic(c) {
  // btoa takes Latin-1 only: encode the UTF-8 bytes.
  const bytes = new TextEncoder().encode(c.user + ':' + c.password);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return 'Basic ' + btoa(s);
}

// api sends one request and returns {status, data, text, headers};
// a 4xx or 5xx throws an ApiError carrying the node's own sentence.
// credentials: 'omit' keeps the browser from its own Basic prompt and
// from any credentials it cached: only ours are sent.
export async function api(method, path, body, opts = {}) {
  const headers = {};
  const c = credentials();
  if (c) headers.Authorization = basic(c);
  let payload;
  if (body !== undefined) {
    if (opts.raw) {
      payload = body;
      headers['Content-Type'] = opts.contentType || 'application/octet-stream';
    } else {
      payload = JSON.stringify(body);
      headers['Content-Type'] = 'application/json';
    }
  }
  Object.assign(headers, opts.headers || {});
  let res;
  try {
    res = await fetch(path, { method, headers, body: payload, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    throw new ApiError(0, 'the node did not answer (' + e.message + ')');
  }
  const text = await res.text();
  let data = null;
  if (text && (res.headers.get('Content-Type') || '').startsWith('application/json')) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (res.status >= 400) {
    const msg = (data && data.error) || text || res.statusText;
    throw new ApiError(res.status, msg);
  }
  return { status: res.status, data, text, headers: res.headers };
}

export const get = (path) => api('GET', path).then((r) => r.data);

// securityOff says whether the node checks credentials: only with
// security off (developer mode) does it answer a request that carries
// none. true or false once the node has said (kept for the page's life);
// undefined while it is unreachable or not ready.
let off;
export async function securityOff() {
  if (off !== undefined) return off;
  try {
    const res = await fetch('/v1/topics?limit=1', { credentials: 'omit', cache: 'no-store' });
    if (res.status === 200) off = true;
    else if (res.status === 401) off = false;
  } catch {
    // unreachable: ask again next time
  }
  return off;
}

export function enc(s) {
  return encodeURIComponent(s);
}

// allTopics pages through the topic list (at most pages×1000 topics).
export async function allTopics(pages = 10) {
  let out = [];
  let token = '';
  for (let i = 0; i < pages; i++) {
    const d = await get('/v1/topics?limit=1000' + (token ? '&page_token=' + enc(token) : ''));
    out = out.concat(d.topics || []);
    token = d.next_page_token || '';
    if (!token) break;
  }
  return out;
}
