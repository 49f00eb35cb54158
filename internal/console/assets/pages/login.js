import { api, signIn, signOut } from '../api.js';
import { h, clear, problem } from '../ui.js';

export async function render(main, params, ctx) {
  const next = ctx.query.get('next') || '/topics';
  const user = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true, id: 'login-user' });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true, id: 'login-password' });
  const out = h('div', {});
  const form = h('form', { class: 'card narrow', 'data-form': 'login', onsubmit: async (ev) => {
    ev.preventDefault();
    signIn(user.value, pass.value);
    try {
      await api('GET', '/v1/topics?limit=1');
      ctx.go(next.replace(/^\//, ''));
    } catch (e) {
      signOut();
      clear(out, problem(e));
    }
  } },
  h('label', { class: 'field', for: 'login-user' }, h('span', {}, 'User'), user),
  h('label', { class: 'field', for: 'login-password' }, h('span', {}, 'Password'), pass),
  h('button', { type: 'submit', class: 'primary' }, 'Sign in'), out);
  clear(main, h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'Your credentials stay in this tab (sessionStorage) and go to this node\'s /v1 API as HTTP Basic, nowhere else.'),
    form);
  user.focus();
}
