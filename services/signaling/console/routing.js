// Routing tables (SPEC §10): the draft (destinations, sets, rules) and the published versions, read
// only here (edits go through the API, README "Routing engine"). Operator role only.
import { api } from './api.js';
import { failure, h, table, when } from './dom.js';

export async function routingView(root) {
  root.replaceChildren(h('h2', {}, 'Routing'), h('p.off', {}, 'loading…'));
  let versions;
  let draft;
  try {
    [versions, draft] = await Promise.all([api('GET', '/vms/routing/versions'), api('GET', '/vms/routing/draft')]);
  } catch (err) {
    const text = err.httpStatus === 403 ? h('div.notice', {}, 'Routing tables are for the operator role only: log in with an operator token.') : failure(err);
    return root.replaceChildren(h('h2', {}, 'Routing'), text);
  }
  root.replaceChildren(
    h('h2', {}, 'Routing'),
    h('p#routing-version', {}, `version in force: ${versions.current ?? 'none published'}`),
    h('h3', {}, `Rules (${draft.rules.length}, draft)`),
    table(
      [
        { title: 'id', value: (r) => String(r.id) },
        { title: 'group', value: (r) => r.group },
        { title: 'field', value: (r) => r.field },
        { title: 'prefix', value: (r) => h('span.mono', {}, r.prefix === '' ? '(default)' : r.prefix) },
        { title: 'priority', value: (r) => String(r.priority) },
        { title: 'set', value: (r) => r.setId },
        { title: 'gray release', value: (r) => (r.release ? `${r.release.canarySetId} step ${r.release.step}` : '') },
        { title: 'enabled', value: (r) => (r.enabled ? 'yes' : 'no') },
      ],
      draft.rules.slice(0, 500),
    ),
    draft.rules.length > 500 ? h('p.off', {}, `first 500 of ${draft.rules.length} rules shown`) : null,
    h('h3', {}, `Sets (${draft.sets.length})`),
    table(
      [
        { title: 'set', value: (s) => s.id },
        { title: 'algorithm', value: (s) => s.algorithm },
        { title: 'members', value: (s) => s.members.map((m) => `${m.destinationId}×${m.weight}`).join(', ') },
      ],
      draft.sets,
    ),
    h('h3', {}, `Destinations (${draft.destinations.length})`),
    table(
      [
        { title: 'destination', value: (d) => d.id },
        { title: 'kind', value: (d) => d.kind },
        { title: 'address', value: (d) => h('span.mono', {}, d.address) },
      ],
      draft.destinations,
    ),
    h('h3', {}, 'Published versions'),
    table(
      [
        { title: 'version', value: (v) => String(v.version) },
        { title: 'parent', value: (v) => (v.parent === undefined || v.parent === null ? '' : String(v.parent)) },
        { title: 'published', value: (v) => when(v.publishedAt) },
        { title: 'by', value: (v) => v.publishedBy },
        { title: 'rules', value: (v) => String(v.ruleCount) },
        { title: 'comment', value: (v) => v.comment },
      ],
      versions.versions,
    ),
  );
}
