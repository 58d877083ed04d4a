// DOM helpers. Everything shown comes from the network (device names, ids, platform names are set by
// devices and operators): it is only ever inserted as text, never as HTML.

/**
 * h('tag.class#id', {attr: value, onclick: fn}, ...children): an element. Children are nodes or
 * strings (text nodes); null/undefined/false children are skipped.
 */
export function h(spec, attrs = {}, ...children) {
  const [tagAndClasses, id] = spec.split('#');
  const [tag, ...classes] = tagAndClasses.split('.');
  const el = document.createElement(tag || 'div');
  if (id) el.id = id;
  if (classes.length > 0) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces the content of `parent` with `children`. */
export function mount(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

/** A table: `columns` = [{title, value: (row) => text|node}], `onRow` makes rows clickable. */
export function table(columns, rows, onRow) {
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c.title)))),
    h(
      'tbody',
      {},
      rows.length === 0
        ? h('tr', {}, h('td', { colspan: columns.length, class: 'off' }, 'nothing to show'))
        : rows.map((r) => h(onRow ? 'tr.clickable' : 'tr', onRow ? { onclick: () => onRow(r), dataset: r.__key ? { key: r.__key } : {} } : {}, columns.map((c) => h('td', {}, c.value(r) ?? '')))),
    ),
  );
}

/** A failure box with the API's code and message. */
export function failure(err) {
  return h('div.error', { role: 'alert' }, err instanceof Error ? err.message : String(err));
}

export const yesNo = (b) => (b ? h('span.badge.on', {}, 'online') : h('span.badge', {}, 'offline'));

/** ISO time as local date-time text, or '—'. */
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
