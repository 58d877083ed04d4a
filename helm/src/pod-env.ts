// What a container of a rendered pod template would see, computed the way the kubelet does: envFrom
// ConfigMaps, then `env` in order, with downward-API fields and `$(VAR)` references to variables
// defined before (kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables),
// and the files of ConfigMap volumes. Lets a test feed the chart's output to the signaling config loader.
import type { Manifest } from './render.ts';

export interface PodFacts {
  readonly podName: string;
  readonly hostIP: string;
  /** Secrets that exist in the namespace besides the rendered ones (e.g. secrets.existingSecret). */
  readonly externalSecrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface ContainerView {
  readonly env: Record<string, string>;
  readonly args: string[];
  /** Mounted ConfigMap files by absolute path. */
  readonly files: Map<string, string>;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

const expand = (s: string, env: Readonly<Record<string, string>>): string =>
  s.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);

export function containerView(manifests: readonly Manifest[], workload: Manifest, container: string, pod: PodFacts): ContainerView {
  const byKind = (kind: string, name: string): Manifest | undefined => manifests.find((m) => m.kind === kind && m.metadata.name === name);
  const secretValue = (name: string, key: string): string | undefined => {
    const rendered = byKind('Secret', name);
    if (rendered !== undefined) return obj(rendered['stringData'])[key] as string | undefined;
    return pod.externalSecrets?.[name]?.[key];
  };
  const podSpec = obj(obj(obj(workload['spec'])['template'])['spec']);
  const c = list(podSpec['containers']).find((x) => x['name'] === container);
  if (c === undefined) throw new Error(`no container ${container}`);
  const env: Record<string, string> = {};
  for (const from of list(c['envFrom'])) {
    const name = obj(from['configMapRef'])['name'] as string;
    const cm = byKind('ConfigMap', name);
    if (cm === undefined) throw new Error(`envFrom: no ConfigMap ${name}`);
    Object.assign(env, obj(cm['data']));
  }
  for (const e of list(c['env'])) {
    const name = e['name'] as string;
    if (typeof e['value'] === 'string') {
      env[name] = expand(e['value'], env);
      continue;
    }
    const from = obj(e['valueFrom']);
    const field = obj(from['fieldRef'])['fieldPath'];
    if (field === 'metadata.name') env[name] = pod.podName;
    else if (field === 'status.hostIP') env[name] = pod.hostIP;
    else if (from['secretKeyRef'] !== undefined) {
      const ref = obj(from['secretKeyRef']);
      const v = secretValue(ref['name'] as string, ref['key'] as string);
      if (v !== undefined) env[name] = v;
      else if (ref['optional'] !== true) throw new Error(`env ${name}: secret ${String(ref['name'])}/${String(ref['key'])} missing`);
    } else throw new Error(`env ${name}: unsupported source`);
  }
  const files = new Map<string, string>();
  const volumes = list(podSpec['volumes']);
  for (const m of list(c['volumeMounts'])) {
    const v = volumes.find((x) => x['name'] === m['name']);
    const cmName = obj(v?.['configMap'])['name'];
    if (typeof cmName !== 'string') continue;
    const cm = byKind('ConfigMap', cmName);
    if (cm === undefined) throw new Error(`volume ${String(m['name'])}: no ConfigMap ${cmName}`);
    for (const [k, text] of Object.entries(obj(cm['data']))) files.set(`${m['mountPath'] as string}/${k}`, String(text));
  }
  const args = (Array.isArray(c['args']) ? (c['args'] as string[]) : []).map((a) => expand(a, env));
  return { env, args, files };
}
