// Live view of one channel: POST /vms/play/start gives a session and the media node's URLs (HTTP-FLV,
// HLS, RTSP, RTMP, WebRTC); the <video> element plays the HLS URL where the browser plays HLS natively
// (no player library is shipped: no external code, SPEC console), and every URL is listed to open in
// a player. Stop (or leaving the screen) ends the session with POST /vms/play/stop.
import { api, q } from './api.js';
import { failure, h } from './dom.js';

export function livePanel(channelId) {
  let sessionId = null;
  const status = h('div#live-status', {}, 'not playing');
  const urls = h('div#live-urls', {});
  const video = h('video#live-video', { controls: true, muted: true, autoplay: true, playsinline: true });
  const start = h('button#live-start', { type: 'button' }, 'Start live view');
  const stopButton = h('button#live-stop', { type: 'button', disabled: true }, 'Stop');

  const stop = async () => {
    const id = sessionId;
    if (id === null) return;
    sessionId = null;
    video.removeAttribute('src');
    video.load();
    start.disabled = false;
    stopButton.disabled = true;
    try {
      await api('POST', `/vms/play/stop?${q({ sessionId: id })}`);
      status.replaceChildren('stopped');
      urls.replaceChildren();
    } catch (err) {
      status.replaceChildren(failure(err));
    }
  };

  start.addEventListener('click', async () => {
    start.disabled = true;
    status.replaceChildren('starting…');
    try {
      const s = await api('POST', `/vms/play/start?${q({ channelId })}`);
      sessionId = s.sessionId;
      stopButton.disabled = false;
      status.replaceChildren(h('span.ok', {}, `playing · session ${s.sessionId} · media node ${s.mediaNodeId} · viewers ${s.viewers}`));
      urls.replaceChildren(
        h('dl.kv', {}, Object.entries(s.urls ?? {}).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, h('a.mono', { href: v, target: '_blank', rel: 'noreferrer', dataset: { url: k } }, v))])),
      );
      const hls = s.urls?.hls;
      if (hls && video.canPlayType('application/vnd.apple.mpegurl') !== '') video.src = hls;
      else urls.append(h('p.off', {}, 'This browser does not play HLS natively: open the HTTP-FLV or HLS URL in a player (e.g. VLC, ffplay).'));
    } catch (err) {
      start.disabled = false;
      status.replaceChildren(failure(err));
    }
  });
  stopButton.addEventListener('click', () => void stop());

  const element = h('div.card#live', {}, h('h3', {}, `Live view · ${channelId}`), h('div.toolbar', {}, start, stopButton), status, video, urls);
  return { element, stop: () => void stop() };
}
