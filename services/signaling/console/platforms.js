// Upstream platforms (SPEC CASC-2) and the channels shared with each. A tenant token lists its own
// tenant's platforms only (the API decides). The digest password is never sent back by the API.
import { api } from './api.js';
import { failure, h, table } from './dom.js';

export async function platformsView(root) {
  root.replaceChildren(h('h2', {}, 'Upstream platforms'), h('p.off', {}, 'loading…'));
  let list;
  try {
    list = await api('GET', '/vms/platforms');
  } catch (err) {
    return root.replaceChildren(h('h2', {}, 'Upstream platforms'), failure(err));
  }
  const shared = h('div#platform-channels', {});
  const show = async (p) => {
    shared.replaceChildren(h('p.off', {}, 'loading…'));
    try {
      const channels = await api('GET', `/vms/platforms/${encodeURIComponent(p.serverId)}/channels`);
      shared.replaceChildren(
        h('h3', {}, `Channels shared with ${p.name || p.serverId} (${channels.length})`),
        table(
          [
            { title: 'channel id', value: (c) => h('span.mono', {}, c.channelId) },
            { title: 'device id', value: (c) => h('span.mono', {}, c.deviceId) },
            { title: 'catalog group', value: (c) => c.catalogGroupId ?? '' },
            { title: 'parent', value: (c) => c.parentId ?? '' },
          ],
          channels,
        ),
      );
    } catch (err) {
      shared.replaceChildren(failure(err));
    }
  };
  root.replaceChildren(
    h('h2', {}, 'Upstream platforms'),
    h(
      'div#platforms',
      {},
      table(
        [
          { title: 'server id', value: (p) => h('span.mono', {}, p.serverId) },
          { title: 'name', value: (p) => p.name ?? '' },
          { title: 'address', value: (p) => h('span.mono', {}, `${p.transport ?? ''} ${p.host}:${p.port}`) },
          { title: 'enabled', value: (p) => (p.enabled ? 'yes' : 'no') },
          { title: 'tenant', value: (p) => p.tenantId },
          { title: 'register expires (s)', value: (p) => String(p.registerExpiresS ?? '') },
        ],
        list.map((p) => ({ ...p, __key: p.serverId })),
        (p) => void show(p),
      ),
    ),
    shared,
  );
}
