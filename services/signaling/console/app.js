// The console: token entry, then a hash router over the screens. Plain ES modules served by every
// signaling instance under /console (no build step, no external code). Each screen renders into
// <main> and may return a cleanup (stop polling, stop a live session) run when the screen changes.
import { claimsOf, token } from './api.js';
import { deviceView } from './device.js';
import { devicesView } from './devices.js';
import { h } from './dom.js';
import { nodesView } from './nodes.js';
import { platformsView } from './platforms.js';
import { routingView } from './routing.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const logout = document.getElementById('logout');
let cleanup = null;
let renderSeq = 0;

function loginView(message) {
  nav.hidden = true;
  logout.hidden = true;
  who.textContent = '';
  const input = h('textarea#token-input', { placeholder: 'paste a token: npm run token -- --tenant 000000 --user me [--operator]', required: true, spellcheck: 'false' });
  const form = h(
    'form.login.card',
    {
      onsubmit: (e) => {
        e.preventDefault();
        const t = input.value.trim().replace(/^bearer\s+/i, '');
        if (claimsOf(t) === null) return void form.append(h('div.error', {}, 'not a JWT (three base64url parts)'));
        token.set(t);
        if (!location.hash || location.hash === '#/login') location.hash = '#/devices';
        else void render();
      },
    },
    h('h2', {}, 'Log in'),
    h('p', {}, 'The console calls the control API with your token (kept in this tab only). A tenant token sees its own tenant’s devices; the node table and routing need the operator role.'),
    message ? h('div.notice', {}, message) : null,
    input,
    h('p', {}, h('button#login', { type: 'submit' }, 'Log in')),
  );
  main.replaceChildren(form);
}

async function render() {
  const seq = ++renderSeq;
  if (cleanup) {
    const c = cleanup;
    cleanup = null;
    c();
  }
  const t = token.get();
  const claims = t ? claimsOf(t) : null;
  if (!claims) return loginView();
  nav.hidden = false;
  logout.hidden = false;
  who.textContent = `${claims.userId} · tenant ${claims.tenantId} · ${claims.role}`;
  const [path, search] = (location.hash.slice(1) || '/devices').split('?');
  const params = new URLSearchParams(search ?? '');
  const parts = path.split('/').filter(Boolean);
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.nav === (parts[0] === 'device' ? 'devices' : parts[0]));
  let done;
  switch (parts[0]) {
    case 'nodes':
      done = await nodesView(main);
      break;
    case 'device':
      done = await deviceView(main, params, decodeURIComponent(parts[1] ?? ''));
      break;
    case 'platforms':
      done = await platformsView(main);
      break;
    case 'routing':
      done = await routingView(main);
      break;
    default:
      done = await devicesView(main, params);
  }
  if (typeof done === 'function') {
    if (seq === renderSeq) cleanup = done;
    else done(); // the screen changed while this one loaded
  }
}

logout.addEventListener('click', () => {
  token.clear();
  void render();
});
window.addEventListener('vms:unauthorized', () => {
  token.clear();
  // after the failing screen has shown its error (its catch runs first): the login replaces it
  setTimeout(() => {
    renderSeq++;
    if (cleanup) cleanup();
    cleanup = null;
    loginView('The token was refused (expired, or signed with another key): paste a new one.');
  }, 0);
});
window.addEventListener('hashchange', () => void render());
void render();
