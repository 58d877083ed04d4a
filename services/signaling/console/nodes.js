// Nodes screen: the node table with online device counts and the cascade leader (GET /vms/nodes,
// SPEC NODE-2). The node table is infrastructure, for the operator role only (SPEC SEC-2): a tenant
// token gets 403, shown as a plain explanation rather than an error.
import { api } from './api.js';
import { failure, h, table, when } from './dom.js';

export async function nodesView(root) {
  let data;
  try {
    data = await api('GET', '/vms/nodes');
  } catch (err) {
    if (err.httpStatus === 403) {
      return root.replaceChildren(h('h2', {}, 'Nodes'), h('div.notice#nodes-forbidden', {}, 'The node table is for the operator role only: log in with an operator token (npm run token -- --operator).'));
    }
    return root.replaceChildren(h('h2', {}, 'Nodes'), failure(err));
  }
  const online = data.nodes.filter((n) => n.online);
  root.replaceChildren(
    h('h2', {}, 'Nodes'),
    h('p', {}, `${online.length} of ${data.nodes.length} online · cascade leader: `, h('strong#cascade-leader', {}, data.cascadeLeader ?? 'none')),
    h(
      'div#nodes',
      {},
      table(
        [
          { title: 'node', value: (n) => h('span', {}, n.nodeCode, n.self ? ' (this instance)' : '') },
          { title: 'state', value: (n) => (n.online ? h('span.badge.on', {}, 'online') : h('span.badge', {}, 'offline')) },
          { title: 'leader', value: (n) => (n.nodeCode === data.cascadeLeader ? h('span.badge.leader', {}, 'cascade leader') : '') },
          { title: 'online devices', value: (n) => h('span.online-count', {}, String(n.onlineDeviceCount)) },
          { title: 'SIP', value: (n) => h('span.mono', {}, n.sipAddress ?? '') },
          { title: 'internal URL', value: (n) => h('span.mono', {}, n.internalBaseUrl ?? '') },
          { title: 'cascade volunteer', value: (n) => (n.cascadeNode ? 'yes' : 'no') },
          { title: 'last heartbeat', value: (n) => when(n.lastHeartbeatAt) },
          { title: 'version', value: (n) => n.version ?? '' },
        ],
        data.nodes,
      ),
    ),
  );
}
