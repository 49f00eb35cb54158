import { api, get, enc, credentials, securityOff } from '../api.js';
import { h, clear, table, problem, note, field, confirmBox, when } from '../ui.js';

// Grants are written as "action:pattern,pattern" items separated by
// spaces or semicolons: "produce:orders*,eu.* consume:orders".
export function parseGrants(s) {
  const out = [];
  for (const item of s.split(/[\s;]+/).filter(Boolean)) {
    const [action, pats] = item.split(':');
    if (!action || !pats) throw new Error('grant "' + item + '" is not action:pattern[,pattern]');
    out.push({ action, patterns: pats.split(',').filter(Boolean) });
  }
  return out;
}

export function grantsText(gs) {
  return (gs || []).map((g) => g.action + ':' + g.patterns.join(',')).join(' ');
}

const keysPath = (user) => '/v1/users/' + enc(user) + '/access-keys';

// With security off there is nobody to manage: say so, and how to turn
// it on, rather than show an empty table. Users made anyway are listed.
async function renderSecurityOff(main) {
  const list = await get('/v1/users');
  const users = list.users || [];
  clear(main, h('h1', {}, 'Users and grants'),
    h('div', { class: 'card notice', 'data-notice': 'security-off' },
      h('p', {}, h('strong', {}, 'Security is off on this node'), ' (developer mode): no credentials are checked and every request may do everything, so there are no users to manage, no grants enforced and no access keys to make.'),
      h('p', {}, 'To turn it on, set ', h('code', {}, 'security.enabled'), ' (', h('code', {}, 'NARAD_SECURITY_ENABLED=true'), ') and restart the node; see docs/security.md.')),
    users.length ? [h('h2', {}, 'Users made anyway'), h('p', { class: 'muted' }, 'Their grants take effect once security is on.'),
      table([['User', (u) => h('strong', {}, u.username)], ['Grants', (u) => grantsText(u.grants) || 'none']], users, { name: 'users', key: (u) => u.username })] : null);
}

export async function render(main) {
  if (await securityOff()) return renderSecurityOff(main);
  const me = credentials()?.user;
  const body = h('div', {});
  const mine = h('div', { 'data-section': 'my-keys' });
  const out = h('div', {});
  // Access keys: the new secret's box and the last key error sit outside
  // what the refresh redraws, so neither is wiped under the reader.
  const secretBox = h('div', { 'data-section': 'new-key' });
  const keyErr = h('div', { 'data-section': 'key-error' });
  let dropSecret = null; // forgets the secret shown, if one is
  const uname = h('input', { id: 'user-name', name: 'username', required: true, autocomplete: 'off' });
  const upass = h('input', { id: 'user-password', name: 'password', type: 'password', required: true, autocomplete: 'new-password' });
  const ugrants = h('input', { id: 'user-grants', name: 'grants', placeholder: 'produce:orders* consume:orders' });
  const create = h('details', { class: 'card' }, h('summary', {}, 'Create a user'),
    h('form', { class: 'row', 'data-form': 'create-user', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await api('POST', '/v1/users', { username: uname.value, password: upass.value, grants: parseGrants(ugrants.value) });
        clear(out, note('Created user ' + uname.value + '.'));
        uname.value = upass.value = ugrants.value = '';
        await refresh(true);
      } catch (e) {
        clear(out, problem(e));
      }
    } }, field('User', uname), field('Password', upass), field('Grants', ugrants, 'action:pattern,… — produce, consume, create, admin'),
    h('button', { type: 'submit', class: 'primary' }, 'Create')));
  clear(main, h('h1', {}, 'Users and grants'),
    h('p', { class: 'muted' }, 'Admins (admin:*) manage users here; everyone manages its own access keys. Passwords are never shown; a new key\'s secret only once.'),
    create, out, secretBox, keyErr, mine, body);

  // busy: the reader is typing or confirming there; a redraw would lose it.
  const busy = () => [body, mine].some((el) => el.querySelector('input:focus, .confirm'));

  async function refresh(force) {
    let users = null;
    let listErr = null;
    try {
      users = (await get('/v1/users')).users || [];
    } catch (e) {
      if (e.status === 401) throw e;
      listErr = e;
    }
    // Whose keys: every user listed (an admin's), and the viewer's own.
    const listed = (users || []).map((u) => u.username);
    const names = me && !listed.includes(me) ? listed.concat(me) : listed;
    const keys = new Map(await Promise.all(names.map(async (n) => {
      try {
        return [n, (await get(keysPath(n))).access_keys || []];
      } catch (e) {
        if (e.status === 401) throw e;
        return [n, e];
      }
    })));
    if (!force && busy()) return; // do not redraw under the typist
    create.hidden = listErr !== null && listErr.status === 403;
    clear(mine, me && !listed.includes(me) ? [h('h2', {}, 'Your access keys'), keysOf(me, keys.get(me))] : null);
    if (listErr) return clear(body, problem(listErr));
    clear(body, table([
      ['User', (u) => h('strong', {}, u.username)],
      ['Id', (u) => u.id],
      ['Grants', (u) => grantEditor(u)],
      ['Limits', (u) => (u.limits ? Object.entries(u.limits).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => k + '=' + v).join(' ') || 'none' : 'defaults')],
      ['Access keys', (u) => keysOf(u.username, keys.get(u.username))],
      ['', (u) => deleteButton(u)],
    ], users, { name: 'users', key: (u) => u.username }));
  }

  // keysOf lists a user's access keys (never a secret), each with its
  // revoke, and the create button.
  function keysOf(user, ks) {
    return h('div', { class: 'keys', 'data-keys': user },
      ks instanceof Error ? problem(ks)
        : ks.length === 0 ? h('p', { class: 'muted' }, 'No access keys.')
          : h('ul', { class: 'keys' }, ks.map((k) => h('li', { 'data-key': k.access_key_id },
            h('code', {}, k.access_key_id), ' ', h('small', { class: 'muted' }, 'created ' + when(k.created_at)), ' ', revokeButton(user, k.access_key_id)))),
      h('button', { type: 'button', class: 'small', 'data-action': 'create-key', onclick: () => createKey(user) }, 'Create access key'));
  }

  function revokeButton(user, id) {
    const cell = h('span', {});
    cell.append(h('button', { type: 'button', class: 'danger small', 'data-action': 'revoke-key', onclick: () => {
      if (cell.querySelector('.confirm')) return;
      cell.append(confirmBox('Revoke access key ' + id + ' of ' + user + '? Requests signed with it are refused from then on.', 'Revoke', async (box) => {
        clear(keyErr);
        try {
          await api('DELETE', keysPath(user) + '/' + enc(id));
        } catch (e) {
          clear(keyErr, problem(e));
        }
        box.remove();
        await refresh(true);
      }));
    } }, 'Revoke…'));
    return cell;
  }

  async function createKey(user) {
    clear(keyErr);
    try {
      const r = await api('POST', keysPath(user));
      showSecret(user, r.data);
    } catch (e) {
      clear(keyErr, problem(e));
      keyErr.scrollIntoView({ block: 'nearest' });
      return;
    }
    await refresh(true);
  }

  // showSecret shows a new key's secret, the one time the node gives it,
  // until dismissed: then the page drops it (the box, its text and every
  // reference here). It is never stored, nor put in a URL.
  function showSecret(user, created) {
    if (dropSecret) dropSecret();
    let secret = created.secret_access_key;
    delete created.secret_access_key;
    const code = h('code', { 'data-secret': '' }, secret);
    const status = h('span', { role: 'status' });
    const copy = h('button', { type: 'button', 'data-action': 'copy-secret', onclick: async () => {
      if (!secret) return;
      try {
        await navigator.clipboard.writeText(secret);
        status.textContent = 'Copied.';
      } catch {
        // No clipboard API (not a secure context) or no permission:
        // select the secret and try the older copy command.
        const range = document.createRange();
        range.selectNodeContents(code);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        status.textContent = document.execCommand('copy') ? 'Copied.' : 'Selected: copy it with Ctrl+C.';
      }
    } }, 'Copy secret');
    const box = h('div', { class: 'card secret', role: 'region', 'aria-label': 'New access key', 'data-box': 'new-key', 'data-user': user },
      h('h2', {}, 'New access key of ' + user),
      h('dl', { class: 'facts' },
        h('div', {}, h('dt', {}, 'Access key ID'), h('dd', {}, h('code', { 'data-key-id': '' }, created.access_key_id))),
        h('div', {}, h('dt', {}, 'Secret access key'), h('dd', {}, code))),
      h('p', { class: 'warn' }, 'This secret is shown once: store it now. Narad keeps it encrypted and never shows it again.'),
      h('div', { class: 'row' }, copy,
        h('button', { type: 'button', class: 'primary', 'data-action': 'dismiss-key', onclick: () => dropSecret() }, 'I have stored it'), status));
    dropSecret = () => {
      secret = null;
      code.textContent = '';
      getSelection().removeAllRanges();
      box.remove();
      dropSecret = null;
    };
    clear(secretBox, box);
    box.scrollIntoView({ block: 'nearest' });
    copy.focus();
  }

  function grantEditor(u) {
    const input = h('input', { value: grantsText(u.grants), 'aria-label': 'Grants of ' + u.username, class: 'wide', name: 'grants-' + u.username });
    const msg = h('span', {});
    return h('form', { class: 'inline', 'data-form': 'grants', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await api('PUT', '/v1/users/' + enc(u.username) + '/grants', { grants: parseGrants(input.value) });
        clear(msg, note('Saved.'));
      } catch (e) {
        clear(msg, problem(e));
      }
    } }, input, h('button', { type: 'submit' }, 'Save'), msg);
  }

  function deleteButton(u) {
    const cell = h('span', {});
    cell.append(h('button', { type: 'button', class: 'danger small', onclick: () => {
      cell.append(confirmBox('Delete user ' + u.username + '?', 'Delete', async (box) => {
        try {
          await api('DELETE', '/v1/users/' + enc(u.username));
          await refresh(true);
        } catch (e) {
          box.replaceWith(problem(e));
        }
      }));
    } }, 'Delete…'));
    return cell;
  }

  await refresh();
  return { refresh };
}
