// Device screen: the device record, live DeviceInfo / DeviceStatus queries, catalog sync with its
// progress (received of SumNum, GET /vms/device/catalog/sync), the channels (paged, filtered), and for
// the selected channel a PTZ pad and live view. Every call is owner-routed by the API: whichever
// instance serves the console, the device's owner answers (SPEC §4).
import { api, q } from './api.js';
import { pager } from './devices.js';
import { failure, h, table, when, yesNo } from './dom.js';
import { livePanel } from './live.js';

const CHANNEL_PAGE = 50;
const PROGRESS_POLL_MS = 500;

export async function deviceView(root, params, deviceId) {
  const cleanups = [];
  const cleanup = () => cleanups.splice(0).forEach((f) => f());
  let device;
  try {
    device = await api('GET', `/vms/devices/${encodeURIComponent(deviceId)}`);
  } catch (err) {
    root.replaceChildren(h('h2', {}, `Device ${deviceId}`), failure(err));
    return cleanup;
  }
  const infoBox = h('div.card#device-info', {}, h('h3', {}, 'DeviceInfo'), h('p.off', {}, device.online ? 'asking the device…' : 'device offline'));
  const statusBox = h('div.card#device-status', {}, h('h3', {}, 'DeviceStatus'), h('p.off', {}, device.online ? 'asking the device…' : 'device offline'));
  const catalogBox = h('div.card#catalog', {});
  const channelsBox = h('div.card#channels', {});
  const controlBox = h('div#channel-control', {});
  root.replaceChildren(
    h('h2', {}, `Device ${device.deviceId}`, device.name ? ` · ${device.name}` : ''),
    h(
      'div.row',
      {},
      h('div.card', {}, h('h3', {}, 'Record'), kv([
        ['state', yesNo(device.online)],
        ['owner node', device.ownerNode ?? '—'],
        ['tenant', device.tenantId],
        ['manufacturer / model', [device.manufacturer, device.model].filter(Boolean).join(' / ') || '—'],
        ['firmware', device.firmware ?? '—'],
        ['address', device.remoteIp ? `${device.transport ?? ''} ${device.remoteIp}:${device.remotePort}` : '—'],
        ['registered', when(device.registeredAt)],
        ['last keepalive', when(device.keepaliveAt)],
        ['channels', h('span#device-channel-count', {}, String(device.channelCount))],
      ])),
      infoBox,
      statusBox,
    ),
    catalogBox,
    controlBox,
    channelsBox,
  );

  if (device.online) {
    void query(infoBox, 'DeviceInfo', `/vms/device/info?${q({ deviceId })}`, (d) => [
      ['name', d.deviceName], ['manufacturer', d.manufacturer], ['model', d.model], ['firmware', d.firmware], ['channels', d.channelCount],
    ]);
    void query(statusBox, 'DeviceStatus', `/vms/device/status?${q({ deviceId })}`, (d) => [
      ['online', d.online ? 'yes' : 'no'], ['status', d.status], ['encoding', fmt(d.encoding)], ['recording', fmt(d.recording)], ['device time', d.deviceTime], ['alarms', String(d.alarms?.length ?? 0)],
    ]);
  }
  cleanups.push(catalogPanel(catalogBox, deviceId, () => showChannels(1)));

  let selected = null;
  const filter = h('input#channel-filter', { placeholder: 'filter this page by id or name', size: 28 });
  let lastPage = null;
  const renderChannels = () => {
    if (lastPage === null) return;
    const f = filter.value.trim().toLowerCase();
    const rows = lastPage.records
      .filter((c) => f === '' || c.channelId.includes(f) || String(c.name ?? '').toLowerCase().includes(f))
      .map((c) => ({ ...c, __key: c.channelId }));
    channelsBox.replaceChildren(
      h('h3', {}, 'Channels'),
      h('div.toolbar', {}, filter),
      table(
        [
          { title: 'channel id', value: (c) => h('span.mono', {}, c.channelId) },
          { title: 'name', value: (c) => c.name ?? '' },
          { title: 'status', value: (c) => c.status ?? '' },
          { title: 'PTZ type', value: (c) => c.ptzType ?? '' },
          { title: '', value: (c) => (selected === c.channelId ? h('strong', {}, 'selected') : '') },
        ],
        rows,
        (c) => select(c.channelId),
      ),
      pager(lastPage, (p) => void showChannels(p)),
    );
  };
  filter.addEventListener('input', renderChannels);
  const showChannels = async (current) => {
    try {
      lastPage = await api('GET', `/vms/channels?${q({ deviceId, current, size: CHANNEL_PAGE })}`);
      const count = document.getElementById('device-channel-count');
      if (count !== null) count.textContent = String(lastPage.total);
      renderChannels();
    } catch (err) {
      channelsBox.replaceChildren(h('h3', {}, 'Channels'), failure(err));
    }
  };
  let stopLive = () => undefined;
  const select = (channelId) => {
    stopLive();
    selected = channelId;
    renderChannels();
    const live = livePanel(channelId);
    stopLive = live.stop;
    controlBox.replaceChildren(h('div.row', {}, ptzPad(channelId), live.element));
  };
  cleanups.push(() => stopLive());
  await showChannels(Number(params.get('channels') ?? 1) || 1);
  return cleanup;
}

const fmt = (b) => (b === null || b === undefined ? '—' : b ? 'on' : 'off');

function kv(pairs) {
  return h('dl.kv', {}, pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));
}

async function query(box, title, path, rows) {
  try {
    const d = await api('GET', path);
    box.replaceChildren(h('h3', {}, title), kv(rows(d).map(([k, v]) => [k, v === undefined || v === null ? '—' : String(v)])));
  } catch (err) {
    box.replaceChildren(h('h3', {}, title), failure(err));
  }
}

/**
 * Catalog sync: the button starts it (POST), the bar follows GET … until the state leaves `running`.
 * A device may announce thousands of channels (SumNum) over many MESSAGEs: the bar shows received of
 * announced as they arrive. Returns the poll's cleanup.
 */
function catalogPanel(box, deviceId, onDone) {
  let timer = null;
  const bar = h('progress#catalog-progress', { max: 1, value: 0 });
  const label = h('span#catalog-label', {}, '');
  const button = h('button#catalog-sync', { type: 'button' }, 'Sync catalog');
  const error = h('div', {});
  box.replaceChildren(h('h3', {}, 'Catalog'), h('div.toolbar', {}, button, bar, label), error);
  const show = (p) => {
    const total = p.total ?? 0;
    bar.max = Math.max(1, total);
    bar.value = p.state === 'done' && !p.partial ? bar.max : Math.min(p.received, bar.max);
    const of = p.total === null ? '' : ` of ${p.total}`;
    label.textContent = {
      idle: 'no sync since this instance started',
      running: `receiving: ${p.received}${of} channels`,
      done: `done: ${p.received}${of} channels${p.partial ? ' (partial: the device stopped answering)' : ''}`,
      failed: `failed: ${p.error ?? ''}`,
    }[p.state] ?? p.state;
    box.dataset.state = p.state;
    button.disabled = p.state === 'running';
  };
  const poll = async () => {
    timer = null;
    try {
      const p = await api('GET', `/vms/device/catalog/sync?${q({ deviceId })}`);
      show(p);
      if (p.state === 'running') timer = setTimeout(poll, PROGRESS_POLL_MS);
      else if (p.state === 'done') onDone();
    } catch (err) {
      error.replaceChildren(failure(err));
    }
  };
  button.addEventListener('click', async () => {
    error.replaceChildren();
    try {
      show(await api('POST', `/vms/device/catalog/sync?${q({ deviceId })}`));
      if (timer === null) timer = setTimeout(poll, PROGRESS_POLL_MS);
    } catch (err) {
      error.replaceChildren(failure(err));
    }
  });
  void poll();
  return () => timer !== null && clearTimeout(timer);
}

const PAD = [
  ['upleft', '↖'], ['up', '↑'], ['upright', '↗'],
  ['left', '←'], ['stop', '■'], ['right', '→'],
  ['downleft', '↙'], ['down', '↓'], ['downright', '↘'],
];

/** Press and hold moves the camera; release sends stop (GB/T 28181 §A.3 PTZCmd). */
function ptzPad(channelId) {
  const speed = h('input#ptz-speed', { type: 'number', min: 1, max: 255, value: 128, size: 4 });
  const status = h('div#ptz-status', {}, '');
  // One command at a time, in the order pressed: a quick press-and-release must not let "stop" reach the
  // camera before the move it stops (the camera would keep moving), and the status shows the last one.
  let queue = Promise.resolve();
  const send = (command) => {
    queue = queue.then(async () => {
      try {
        await api('POST', `/vms/ptz/control?${q({ channelId, command, speed: speed.value })}`);
        status.replaceChildren(h('span.ok', {}, `sent ${command}`));
      } catch (err) {
        status.replaceChildren(failure(err));
      }
    });
    return queue;
  };
  const button = ([command, glyph]) => {
    let held = false;
    const release = () => {
      if (!held) return;
      held = false;
      void send('stop');
    };
    return h(
      'button',
      {
        type: 'button',
        title: command,
        dataset: { ptz: command },
        onpointerdown: () => {
          if (command === 'stop') return void send('stop');
          held = true;
          void send(command);
        },
        onpointerup: release,
        onpointerleave: release,
      },
      glyph,
    );
  };
  return h(
    'div.card#ptz',
    {},
    h('h3', {}, 'PTZ'),
    h('div.ptz', {}, PAD.map(button)),
    h('div.toolbar.spaced', {}, button(['zoomin', 'zoom +']), button(['zoomout', 'zoom −']), h('label', {}, 'speed ', speed)),
    status,
  );
}
