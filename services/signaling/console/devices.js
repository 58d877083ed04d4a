// Devices screen: the operator's devices (a tenant token: its own tenant's only, the API decides),
// searchable by device id prefix, filterable by state, paged.
import { api, q } from './api.js';
import { failure, h, table, when, yesNo } from './dom.js';

const SIZE = 20;

export async function devicesView(root, params) {
  const current = Math.max(1, Number(params.get('current') ?? 1) || 1);
  const prefix = params.get('idPrefix') ?? '';
  const online = params.get('online') ?? '';
  const go = (p) => {
    location.hash = `#/devices?${q({ idPrefix: p.idPrefix ?? prefix, online: p.online ?? online, current: p.current ?? 1 })}`;
  };
  const search = h('input#device-search', { placeholder: 'device id prefix, e.g. 3402', value: prefix, inputmode: 'numeric', maxlength: 20, size: 24 });
  const state = h('select#device-state', {}, h('option', { value: '' }, 'all'), h('option', { value: 'true' }, 'online'), h('option', { value: 'false' }, 'offline'));
  state.value = online;
  const toolbar = h(
    'form.toolbar',
    { onsubmit: (e) => (e.preventDefault(), go({ idPrefix: search.value.trim(), online: state.value, current: 1 })) },
    search,
    state,
    h('button', { type: 'submit' }, 'Search'),
  );
  root.replaceChildren(h('h2', {}, 'Devices'), toolbar, h('p.off', {}, 'loading…'));
  let page;
  try {
    page = await api('GET', `/vms/devices?${q({ idPrefix: prefix, online, current, size: SIZE })}`);
  } catch (err) {
    return root.replaceChildren(h('h2', {}, 'Devices'), toolbar, failure(err));
  }
  const rows = page.records.map((d) => ({ ...d, __key: d.deviceId }));
  root.replaceChildren(
    h('h2', {}, 'Devices'),
    toolbar,
    h(
      'div#devices',
      {},
      table(
        [
          { title: 'device id', value: (d) => h('span.mono', {}, d.deviceId) },
          { title: 'name', value: (d) => d.name ?? '' },
          { title: 'state', value: (d) => yesNo(d.online) },
          { title: 'owner node', value: (d) => d.ownerNode ?? '—' },
          { title: 'channels', value: (d) => String(d.channelCount) },
          { title: 'tenant', value: (d) => d.tenantId },
          { title: 'transport', value: (d) => d.transport ?? '' },
          { title: 'last keepalive', value: (d) => when(d.keepaliveAt) },
        ],
        rows,
        (d) => (location.hash = `#/device/${encodeURIComponent(d.deviceId)}`),
      ),
    ),
    pager(page, (c) => go({ current: c })),
  );
}

/** Previous / next over a `{total, current, pages}` page. */
export function pager(page, to) {
  const pages = Math.max(1, page.pages);
  return h(
    'div.pager',
    {},
    h('button', { type: 'button', disabled: page.current <= 1, onclick: () => to(page.current - 1) }, '‹ previous'),
    h('span', {}, `page ${page.current} of ${pages} · ${page.total} in all`),
    h('button', { type: 'button', disabled: page.current >= pages, onclick: () => to(page.current + 1) }, 'next ›'),
  );
}
