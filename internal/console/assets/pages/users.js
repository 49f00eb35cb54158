import { api, get, enc } from '../api.js';
import { h, clear, table, problem, note, field, confirmBox } from '../ui.js';

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

export async function render(main) {
  const body = h('div', {});
  const out = h('div', {});
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
        await refresh();
      } catch (e) {
        clear(out, problem(e));
      }
    } }, field('User', uname), field('Password', upass), field('Grants', ugrants, 'action:pattern,… — produce, consume, create, admin'),
    h('button', { type: 'submit', class: 'primary' }, 'Create')));
  clear(main, h('h1', {}, 'Users and grants'), h('p', { class: 'muted' }, 'Admins only (admin:*). Passwords are never shown.'), create, out, body);

  async function refresh() {
    let d;
    try {
      d = await get('/v1/users');
    } catch (e) {
      if (e.status === 401) throw e;
      clear(body, problem(e));
      return;
    }
    if (body.querySelector('input:focus')) return; // do not redraw under the typist
    clear(body, table([
      ['User', (u) => h('strong', {}, u.username)],
      ['Id', (u) => u.id],
      ['Grants', (u) => grantEditor(u)],
      ['Limits', (u) => (u.limits ? Object.entries(u.limits).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => k + '=' + v).join(' ') || 'none' : 'defaults')],
      ['', (u) => deleteButton(u)],
    ], d.users || [], { name: 'users', key: (u) => u.username }));
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
          await refresh();
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
