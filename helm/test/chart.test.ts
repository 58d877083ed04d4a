// The chart rendered with its default values and the example values files, validated against the
// Kubernetes API schemas, and its pod environment fed to the signaling config loader: the settings
// a pod would start with are checked by the same code that reads them in production.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { loadConfig, type Config } from '@vms/signaling';
import { containerView, type PodFacts } from '../src/pod-env.ts';
import { nonBuiltinFunctions, renderChart, type Manifest, type Rendered, type Values } from '../src/render.ts';
import { validateManifest } from '../src/validate.ts';

const CHART = join(dirname(fileURLToPath(import.meta.url)), '..', 'gb28181-cluster');
const EXAMPLES = join(CHART, 'examples');
const EXISTING = { existingSecret: 'vms-secrets' };
const EXTERNAL_SECRETS = {
  'vms-secrets': {
    'node-forward-secret': 'forward-secret-from-the-cluster',
    'signing-key': 'signing-key-from-the-cluster-32-bytes-long',
    'redis-url': 'redis+cluster://redis-0.redis:6379,redis-1.redis:6379,redis-2.redis:6379',
    'mysql-url': 'mysql://vms:pw@mysql.db.svc:3306/vms',
  },
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

function one(r: Rendered, kind: string, name: string): Manifest {
  const found = r.manifests.filter((m) => m.kind === kind && m.metadata.name === name);
  assert.equal(found.length, 1, `${kind}/${name} rendered ${found.length} times: ${r.manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')}`);
  return found[0] as Manifest;
}
const podSpec = (w: Manifest): Obj => obj(obj(obj(w['spec'])['template'])['spec']);
const container = (w: Manifest, name: string): Obj => {
  const c = list(podSpec(w)['containers']).find((x) => x['name'] === name);
  assert.ok(c, `container ${name}`);
  return c;
};
const envEntry = (c: Obj, name: string): Obj => {
  const e = list(c['env']).find((x) => x['name'] === name);
  assert.ok(e, `env ${name}`);
  return e;
};

/** The config a pod of the rendered StatefulSet would start with, through the signaling loader. */
function podConfig(r: Rendered, sts: Manifest, pod: PodFacts): Config {
  const view = containerView(r.manifests, sts, 'signaling', pod);
  return loadConfig(view.args, view.env, {
    readFile: (path) => {
      const text = view.files.get(path);
      if (text === undefined) throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
      return text;
    },
    networkInterfaces: () => ({}),
  });
}

function validateAll(r: Rendered): void {
  assert.ok(r.manifests.length > 0);
  for (const m of r.manifests) {
    validateManifest(m);
    assert.equal(m.metadata.namespace, 'gb', `${m.kind}/${m.metadata.name} namespaced`);
  }
}

const render = (values: Values, valueFiles: string[] = []): Promise<Rendered> =>
  renderChart(CHART, { values, valueFiles, releaseName: 'vms', namespace: 'gb' });

describe('chart templates', () => {
  it('use only Go text/template built-ins, so helm and the Go engine render them alike', () => {
    const dir = join(CHART, 'templates');
    for (const name of readdirSync(dir)) {
      assert.deepEqual(nonBuiltinFunctions(readFileSync(join(dir, name), 'utf8')), [], name);
    }
    // the check itself sees Sprig and Helm functions
    assert.deepEqual(nonBuiltinFunctions('{{ toYaml .Values.x | nindent 4 }} {{ include "a" . }} {{ $r.Values.y }}'), ['include', 'nindent', 'toYaml']);
  });

  it('refuse to render without the secrets, naming the value to set', async () => {
    await assert.rejects(render({}), /secrets\.nodeForwardSecret/);
    await assert.rejects(render({ secrets: { nodeForwardSecret: 'x' } }), /secrets\.signingKey/);
    await assert.rejects(render({ secrets: EXISTING, signaling: { sip: { exposure: 'service' } } }), /signaling\.sip\.service\.pods/);
    await assert.rejects(render({ secrets: EXISTING, signaling: { sip: { exposure: 'nodePort' } } }), /hostNetwork or service/);
    await assert.rejects(render({ secrets: EXISTING, mysql: { bundled: { enabled: true } } }), /mysql\.bundled\.password/);
  });

  it('schema validation fails on a wrong type (the validator is live)', async () => {
    const r = await render({ secrets: EXISTING });
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    const broken = structuredClone(sts) as Obj;
    const c = list(obj(obj(obj(broken['spec'])['template'])['spec'])['containers'])[0] as Obj;
    (list(c['ports'])[0] as Obj)['containerPort'] = 'http';
    assert.throws(() => validateManifest(broken as unknown as Manifest), /containerPort must be integer/);
  });
});

describe('default values (+ an existing Secret)', () => {
  it('render valid manifests: StatefulSet on host network, services, PDB, no bundled stores, no SIP edge', async () => {
    const r = await render({ secrets: EXISTING });
    validateAll(r);
    const kinds = r.manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    assert.deepEqual(kinds, [
      'ConfigMap/vms-gb28181-cluster',
      'PodDisruptionBudget/vms-gb28181-cluster',
      'Service/vms-gb28181-cluster',
      'Service/vms-gb28181-cluster-headless',
      'StatefulSet/vms-gb28181-cluster',
    ]);
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    assert.equal(obj(sts['spec'])['serviceName'], 'vms-gb28181-cluster-headless');
    assert.equal(podSpec(sts)['hostNetwork'], true);
    assert.equal(podSpec(sts)['dnsPolicy'], 'ClusterFirstWithHostNet');
    const headless = one(r, 'Service', 'vms-gb28181-cluster-headless');
    assert.equal(obj(headless['spec'])['clusterIP'], 'None');
    assert.deepEqual(obj(headless['spec'])['selector'], obj(obj(sts['spec'])['selector'])['matchLabels']);
  });

  it('wire the instance id and internal base URL from the pod name, the SIP host from the node', async () => {
    const r = await render({ secrets: EXISTING });
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    const c = container(sts, 'signaling');
    assert.deepEqual(obj(envEntry(c, 'VMS_GB28181_SIP_INSTANCE_ID')['valueFrom']), { fieldRef: { fieldPath: 'metadata.name' } });
    const config = podConfig(r, sts, { podName: 'vms-gb28181-cluster-0', hostIP: '10.1.2.3', externalSecrets: EXTERNAL_SECRETS });
    assert.equal(config.sip.instanceId, 'vms-gb28181-cluster-0');
    assert.equal(config.sip.internalBaseUrl, 'http://vms-gb28181-cluster-0.vms-gb28181-cluster-headless.gb.svc:18080');
    assert.equal(config.sip.host, '10.1.2.3');
    assert.equal(config.sip.port, 5060);
    assert.equal(config.http.port, 18080);
    // the Secret's values reach the process
    assert.equal(config.sip.nodeForwardSecret, 'forward-secret-from-the-cluster');
    assert.equal(config.auth.signingKey, 'signing-key-from-the-cluster-32-bytes-long');
    assert.equal(config.auth.signingKeySource, 'configured');
    assert.equal(config.redis, null); // defaults: standalone
  });

  it('probe /healthz (startup, liveness) and /readyz (readiness), drain with preStop, run as non-root', async () => {
    const r = await render({ secrets: EXISTING });
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    const c = container(sts, 'signaling');
    assert.equal(obj(obj(c['startupProbe'])['httpGet'])['path'], '/healthz');
    assert.equal(obj(obj(c['livenessProbe'])['httpGet'])['path'], '/healthz');
    assert.equal(obj(obj(c['readinessProbe'])['httpGet'])['path'], '/readyz');
    assert.deepEqual(obj(obj(obj(c['lifecycle'])['preStop'])['exec'])['command'], ['sleep', '5']);
    assert.equal(podSpec(sts)['terminationGracePeriodSeconds'], 30);
    assert.equal(obj(podSpec(sts)['securityContext'])['runAsNonRoot'], true);
    assert.equal(obj(c['securityContext'])['allowPrivilegeEscalation'], false);
    assert.equal(obj(c['securityContext'])['readOnlyRootFilesystem'], true);
    assert.ok(obj(obj(c['resources'])['limits'])['memory']);
    const pdb = one(r, 'PodDisruptionBudget', 'vms-gb28181-cluster');
    assert.equal(obj(pdb['spec'])['maxUnavailable'], 1);
    assert.deepEqual(obj(obj(pdb['spec'])['selector'])['matchLabels'], obj(obj(sts['spec'])['selector'])['matchLabels']);
  });

  it('create the Secret from values when no existing Secret is named', async () => {
    const r = await render({ secrets: { nodeForwardSecret: 'fwd-secret', signingKey: 'k'.repeat(32) } });
    validateAll(r);
    const secret = one(r, 'Secret', 'vms-gb28181-cluster');
    assert.deepEqual(secret['stringData'], { 'node-forward-secret': 'fwd-secret', 'signing-key': 'k'.repeat(32) });
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    const config = podConfig(r, sts, { podName: 'vms-gb28181-cluster-0', hostIP: '10.1.2.3' });
    assert.equal(config.sip.nodeForwardSecret, 'fwd-secret');
    assert.equal(config.sip.password, null); // no sipPassword: not wired
  });
});

describe('examples/cluster-values.yaml', () => {
  it('renders valid manifests: 3 pods, a SIP Service per pod selected by pod name, Redis Cluster and MySQL from the Secret', async () => {
    const r = await render({}, [join(EXAMPLES, 'cluster-values.yaml')]);
    validateAll(r);
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    assert.equal(obj(sts['spec'])['replicas'], 3);
    assert.equal(podSpec(sts)['hostNetwork'], undefined);
    for (const i of [0, 1, 2]) {
      const svc = one(r, 'Service', `vms-gb28181-cluster-sip-${i}`);
      const spec = obj(svc['spec']);
      assert.deepEqual(spec['selector'], { 'statefulset.kubernetes.io/pod-name': `vms-gb28181-cluster-${i}` });
      assert.equal(spec['type'], 'LoadBalancer');
      assert.equal(spec['externalTrafficPolicy'], 'Local');
      assert.deepEqual(list(spec['ports']).map((p) => `${String(p['protocol'])}/${String(p['port'])}`), ['UDP/5060', 'TCP/5060']);
    }
    const config = podConfig(r, sts, { podName: 'vms-gb28181-cluster-1', hostIP: '10.1.2.3', externalSecrets: EXTERNAL_SECRETS });
    assert.equal(config.sip.instanceId, 'vms-gb28181-cluster-1');
    assert.equal(config.sip.internalBaseUrl, 'http://vms-gb28181-cluster-1.vms-gb28181-cluster-headless.gb.svc:18080');
    assert.equal(config.sip.host, '203.0.113.11'); // its own Service's address, from the per-pod file
    assert.equal(config.sip.bindHost, '0.0.0.0');
    assert.equal(config.sip.port, 5060);
    assert.equal(config.sip.cascadeNode, true);
    assert.equal(config.redis?.mode, 'cluster');
    assert.equal(config.mysql?.database, 'vms');
    assert.equal(config.media.probeIntervalSec, 5);
  });

  it('NodePort: the node port is the port the pod listens on and advertises', async () => {
    const r = await render({
      secrets: EXISTING,
      signaling: { sip: { exposure: 'service', service: { type: 'NodePort', pods: [{ address: '198.51.100.7', port: 30560 }] } } },
    });
    validateAll(r);
    const ports = list(obj(one(r, 'Service', 'vms-gb28181-cluster-sip-0')['spec'])['ports']);
    assert.deepEqual(ports.map((p) => [p['port'], p['targetPort'], p['nodePort']]), [[30560, 30560, 30560], [30560, 30560, 30560]]);
    const config = podConfig(r, one(r, 'StatefulSet', 'vms-gb28181-cluster'), { podName: 'vms-gb28181-cluster-0', hostIP: '10.0.0.1', externalSecrets: EXTERNAL_SECRETS });
    assert.equal(config.sip.port, 30560);
    assert.equal(config.sip.host, '198.51.100.7');
  });
});

describe('examples/trial-values.yaml (bundled stores)', () => {
  it('renders Redis and MariaDB StatefulSets and points the signaling pods at them', async () => {
    const r = await render({}, [join(EXAMPLES, 'trial-values.yaml')]);
    validateAll(r);
    one(r, 'StatefulSet', 'vms-gb28181-cluster-redis');
    one(r, 'Service', 'vms-gb28181-cluster-redis');
    one(r, 'StatefulSet', 'vms-gb28181-cluster-mariadb');
    one(r, 'Service', 'vms-gb28181-cluster-mariadb');
    const sts = one(r, 'StatefulSet', 'vms-gb28181-cluster');
    assert.equal(obj(sts['spec'])['replicas'], 2);
    const config = podConfig(r, sts, { podName: 'vms-gb28181-cluster-1', hostIP: '10.1.2.4' });
    assert.equal(config.redis?.mode, 'single');
    assert.match(config.redis?.url ?? '', /^redis:\/\/vms-gb28181-cluster-redis:6379$/);
    assert.equal(config.mysql?.url, 'mysql://vms:trial-db-password@vms-gb28181-cluster-mariadb:3306/vms');
  });
});

describe('sipEdge', () => {
  it('is off by default and renders a valid Deployment and Service when enabled', async () => {
    const off = await render({ secrets: EXISTING });
    assert.equal(off.manifests.filter((m) => m.metadata.name.includes('sip-edge')).length, 0);
    await assert.rejects(render({ secrets: { nodeForwardSecret: 'f'.repeat(16), signingKey: 'k'.repeat(32) }, mysql: { url: 'mysql://u:p@db/vms' }, sipEdge: { enabled: true } }), /secrets\.edgeFlowSecret/);
    await assert.rejects(render({ secrets: EXISTING, sipEdge: { enabled: true } }), /needs MySQL/);
    const on = await render({ secrets: EXISTING, mysql: { fromExistingSecret: true }, sipEdge: { enabled: true } });
    validateAll(on);
    const dep = one(on, 'Deployment', 'vms-gb28181-cluster-sip-edge');
    assert.equal(obj(dep['spec'])['replicas'], 2);
    const text = JSON.stringify(dep);
    for (const name of ['VMS_EDGE_PORT', 'VMS_EDGE_HOST', 'VMS_EDGE_CODE', 'VMS_EDGE_FLOW_SECRET']) assert.ok(text.includes(`"name":"${name}"`), name);
    assert.ok(text.includes('services/sip-edge/src/main.ts'), 'runs the edge service');
    one(on, 'Service', 'vms-gb28181-cluster-sip-edge');
  });
});
