// The routing engine's administration (routes/routing.ts, SPEC §10, docs/routing.md). These routes
// need the all-tenant operator role, and their handlers check every value and name it; so the schemas
// below describe more than they enforce: only what the handlers refuse in the same words is enforced
// here (query integers, the rule id), the bodies' fields are documented by their descriptions (a typed
// field would be coerced by fastify, e.g. "5" accepted as 5, where the handler refuses it).
import { ALGORITHMS, MATCH_FIELDS } from '@vms/routing';
import type { RouteId } from '../route-table.ts';
import { anyData, answers, intParam, query, type JsonSchema, type RouteSchema } from './common.ts';
import { POSITIVE_ID_PATTERN } from './patterns.ts';

type RoutingRouteId = Extract<RouteId, `routing.${string}`>;

const TAGS = ['routing'];
const OPERATOR = 'Operator role only (SPEC SEC-2: a token with role "operator"); a tenant token answers 403.';
const text = (max: number, what: string): JsonSchema => ({ description: `${what}: text, 1-${max} characters` });
const idParams = (name: string, what: string): JsonSchema => ({
  type: 'object',
  properties: { [name]: { type: 'string', description: `${what}: 1-128 characters` } },
  required: [name],
});
const RULE_ID_PARAMS: JsonSchema = {
  type: 'object',
  properties: { ruleId: { type: 'string', pattern: POSITIVE_ID_PATTERN, description: 'rule id handed out by POST /vms/routing/rules' } },
  required: ['ruleId'],
};

const DESTINATION_BODY: JsonSchema = {
  type: 'object',
  description: 'a destination: where a decision may send a request',
  properties: {
    kind: { description: 'one of sip, http, media, shard' },
    address: text(512, 'where it is (SIP URI, base URL, media node id, shard)'),
    attrs: { description: 'optional object of text values' },
  },
};

const SET_BODY: JsonSchema = {
  type: 'object',
  description: 'a destination set: members and how one is chosen',
  properties: {
    algorithm: { description: `one of ${ALGORITHMS.join(', ')}` },
    members: { description: 'list of at most 1000 {destinationId (1-128 characters), weight (integer 0-1000000, default 1), priority (integer -1000000..1000000, default 0)}' },
  },
};

const RULE_BODY: JsonSchema = {
  type: 'object',
  description: 'a rule of the draft: the longest matching prefix of its group wins (then priority)',
  properties: {
    group: text(128, 'rule group (the decision point asking)'),
    field: { description: `the request field matched: one of ${MATCH_FIELDS.join(', ')}` },
    prefix: { description: '0-24 digits (empty: matches every value); default empty' },
    priority: { description: 'integer -1000000..1000000, default 0' },
    setId: text(128, 'the destination set chosen'),
    enabled: { description: 'true or false, default true' },
    window: { description: 'optional time window in which the rule applies (docs/routing.md)' },
    release: { description: 'optional gradual release (share of requests) (docs/routing.md)' },
  },
};

const optionalText = (what: string): JsonSchema => ({ type: 'string', description: what });

export const ROUTING_SCHEMAS: { readonly [K in RoutingRouteId]: RouteSchema } = {
  'routing.draft': { summary: 'The draft routing table: destinations, sets and rules', description: OPERATOR, tags: TAGS, response: answers(anyData('{destinations, sets, rules}'), 'the draft') },
  'routing.destinations.put': {
    summary: 'Create or replace a destination of the draft',
    description: OPERATOR,
    tags: TAGS,
    params: idParams('destinationId', 'destination id'),
    body: DESTINATION_BODY,
    response: answers(anyData('the destination'), 'saved'),
  },
  'routing.destinations.delete': {
    summary: 'Delete a destination of the draft',
    description: OPERATOR,
    tags: TAGS,
    params: idParams('destinationId', 'destination id'),
    response: answers(anyData('{deleted}'), 'deleted or not found'),
  },
  'routing.sets.put': { summary: 'Create or replace a destination set of the draft', description: OPERATOR, tags: TAGS, params: idParams('setId', 'set id'), body: SET_BODY, response: answers(anyData('the set'), 'saved') },
  'routing.sets.delete': { summary: 'Delete a destination set of the draft', description: OPERATOR, tags: TAGS, params: idParams('setId', 'set id'), response: answers(anyData('{deleted}'), 'deleted or not found') },
  'routing.rules.create': { summary: 'Add a rule to the draft', description: OPERATOR, tags: TAGS, body: RULE_BODY, response: answers(anyData('the rule with its new id'), 'added') },
  'routing.rules.update': { summary: 'Replace a rule of the draft', description: OPERATOR, tags: TAGS, params: RULE_ID_PARAMS, body: RULE_BODY, response: answers(anyData('{updated}'), 'replaced or not found') },
  'routing.rules.delete': { summary: 'Delete a rule of the draft', description: OPERATOR, tags: TAGS, params: RULE_ID_PARAMS, response: answers(anyData('{deleted}'), 'deleted or not found') },
  'routing.validate': { summary: 'Check the draft as it would be published', description: OPERATOR, tags: TAGS, response: answers(anyData('{valid, issues, more}'), 'the check') },
  'routing.publish': {
    summary: 'Publish the draft as the next version (every instance reloads it)',
    description: `${OPERATOR} A draft with issues is not published: {published: false, issues}.`,
    tags: TAGS,
    querystring: query({ comment: optionalText('note kept with the version') }),
    response: answers(anyData('{published, version, ruleCount} or {published: false, issues, more}'), 'published or refused'),
  },
  'routing.rollback': { summary: 'Go back to the previous published version', description: `${OPERATOR} Nothing to roll back to answers 400 (version).`, tags: TAGS, response: answers(anyData('{from, to}'), 'rolled back') },
  'routing.versions': {
    summary: 'Published versions, newest first, and the version in force here',
    description: OPERATOR,
    tags: TAGS,
    querystring: query({ limit: intParam(1, 1000, 'how many versions (default 20)') }),
    response: answers(anyData('{current, inForce, versions}'), 'the versions'),
  },
  'routing.decide': {
    summary: 'The decision for a request, explained (live table, and the shadow table when one runs)',
    description: OPERATOR,
    tags: TAGS,
    querystring: query(
      {
        group: optionalText('rule group asking (required)'),
        device: optionalText('device id'),
        caller: optionalText('caller id'),
        callee: optionalText('callee id'),
        callId: optionalText('SIP Call-ID'),
        from: optionalText('From user'),
        to: optionalText('To user'),
        source: optionalText('source address'),
      },
      ['group'],
    ),
    response: answers(anyData('{live, shadow?}: destination (or null), the rule matched and why'), 'the decision'),
  },
  'routing.shadow.start': {
    summary: 'Run a published version in shadow beside the live table and compare their decisions',
    description: OPERATOR,
    tags: TAGS,
    querystring: query({ version: intParam(1, Number.MAX_SAFE_INTEGER, 'the published version to shadow (required)') }, ['version']),
    response: answers(anyData('{shadow, version} or {shadow: false, issues}'), 'started or refused'),
  },
  'routing.shadow.stop': { summary: 'Stop the shadow table', description: OPERATOR, tags: TAGS, response: answers(anyData('{shadow: false}'), 'stopped') },
  'routing.health.list': {
    summary: 'Health of the routing destinations and media nodes (shared by every instance)',
    description: `${OPERATOR} Each: state (what decisions use), auto (probed / reported), manual (disabled, enabled or null), counters, since.`,
    tags: TAGS,
    response: answers(anyData('{destinations: [{destinationId, state, auto, manual, probeFailures, probeSuccesses, businessFailures, since}]}'), 'the states'),
  },
  'routing.health.set': {
    summary: 'Disable or enable a destination by hand, or give it back to probing',
    description: `${OPERATOR} Probing never undoes a manual disable or enable; "auto" lifts it. Shared by every instance. A destination of the table in force or a media node; another id answers 400 (destinationId).`,
    tags: TAGS,
    params: idParams('destinationId', 'destination id or media node id'),
    body: { type: 'object', description: 'the override', properties: { manual: { description: 'one of disabled, enabled, auto' } } },
    response: answers(anyData('the destination health, as in GET /vms/routing/health'), 'set'),
  },
  'routing.shadow.report': { summary: 'How the shadow table’s decisions differ from the live one’s', description: OPERATOR, tags: TAGS, response: answers(anyData('the comparison report'), 'the report') },
};
