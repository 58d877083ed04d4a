// Renders the chart the way `helm template` does, with the Go template engine itself (Go's
// text/template compiled to WebAssembly, @evertdespiegeleer/go-template): Helm is not installable on
// this machine. Helm adds Sprig and its own functions (include, toYaml, required, ...) on top of
// text/template; the chart uses none of them (`checkBuiltinsOnly` holds that), so for this chart both
// produce the same text. Differences from Helm kept on purpose:
//  - a missing key is an error (Helm prints "<no value>"): every value the templates read is declared
//    in values.yaml;
//  - each template is executed with the `_*.tpl` helpers parsed in front of it (Helm parses all files
//    into one set; the chart's templates call nothing but the helpers).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as renderGoTemplate } from '@evertdespiegeleer/go-template';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

export type Values = { [key: string]: unknown };

export interface RenderOptions {
  /** Value files merged over values.yaml in order, then `values`. */
  readonly valueFiles?: readonly string[];
  readonly values?: Values;
  readonly releaseName?: string;
  readonly namespace?: string;
}

export interface Manifest {
  readonly template: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

export interface Rendered {
  readonly manifests: readonly Manifest[];
  /** The rendered text per template file, as `helm template` prints it. */
  readonly texts: ReadonlyMap<string, string>;
  readonly notes: string;
}

/** Go text/template's own functions (pkg.go.dev/text/template#hdr-Functions) and its keywords. */
export const GO_TEMPLATE_BUILTINS: ReadonlySet<string> = new Set([
  'and', 'call', 'html', 'index', 'slice', 'js', 'len', 'not', 'or', 'print', 'printf', 'println', 'urlquery',
  'eq', 'ne', 'lt', 'le', 'gt', 'ge',
  'if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue', 'nil', 'true', 'false',
]);

const isPlainObject = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's coalescing of values: maps merge key by key, anything else replaces; null removes a key. */
export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(out[key])) out[key] = mergeValues(out[key], value);
    else out[key] = value;
  }
  return out;
}

interface ChartFiles {
  readonly chart: Values;
  readonly values: Values;
  readonly helpers: string;
  readonly templates: ReadonlyMap<string, string>;
  readonly notes: string | null;
}

export function readChart(chartDir: string): ChartFiles {
  const dir = join(chartDir, 'templates');
  const names = readdirSync(dir).sort();
  const helpers = names.filter((n) => n.startsWith('_')).map((n) => readFileSync(join(dir, n), 'utf8')).join('');
  const templates = new Map<string, string>();
  for (const n of names) if (!n.startsWith('_') && /\.ya?ml$/.test(n)) templates.set(n, readFileSync(join(dir, n), 'utf8'));
  return {
    chart: parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Values,
    values: parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Values,
    helpers,
    templates,
    notes: names.includes('NOTES.txt') ? readFileSync(join(dir, 'NOTES.txt'), 'utf8') : null,
  };
}

/** Every function or keyword a template's actions name that Go's text/template does not define. */
export function nonBuiltinFunctions(text: string): string[] {
  const found = new Set<string>();
  for (const action of text.matchAll(/\{\{-?([\s\S]*?)-?\}\}/g)) {
    const body = (action[1] ?? '').replace(/\/\*[\s\S]*?\*\//g, '').replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');
    // identifiers in function position: not after `.` or `$`, not a field path
    for (const m of body.matchAll(/(^|[\s(|])([A-Za-z_][A-Za-z0-9_]*)\b/g)) {
      const name = m[2] ?? '';
      if (!GO_TEMPLATE_BUILTINS.has(name)) found.add(name);
    }
  }
  return [...found].sort();
}

/**
 * One template through the Go engine. The wrapper keeps only part of an execution error's text (its
 * pattern misses most of them); the full message comes from the engine's own `Render` entry point, which
 * the wrapper has loaded by then.
 */
async function execute(template: string, data: unknown, name: string): Promise<string> {
  try {
    return await renderGoTemplate(template, data);
  } catch (err) {
    const render = (globalThis as { Render?: (t: string, json: string) => string }).Render;
    const detail = render === undefined ? (err as Error).message : render(template, JSON.stringify(data));
    throw new Error(`${name}: ${detail}`, { cause: err });
  }
}

export async function renderChart(chartDir: string, options: RenderOptions = {}): Promise<Rendered> {
  const files = readChart(chartDir);
  let values = files.values;
  for (const f of options.valueFiles ?? []) values = mergeValues(values, (parseYaml(readFileSync(f, 'utf8')) ?? {}) as Values);
  if (options.values !== undefined) values = mergeValues(values, options.values);
  const c = files.chart;
  const data = {
    Values: values,
    Release: { Name: options.releaseName ?? 'vms', Namespace: options.namespace ?? 'default', Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1 },
    Chart: { Name: c['name'], Version: c['version'], AppVersion: c['appVersion'], Description: c['description'], Type: c['type'], APIVersion: c['apiVersion'], KubeVersion: c['kubeVersion'] },
  };
  const manifests: Manifest[] = [];
  const texts = new Map<string, string>();
  for (const [name, body] of files.templates) {
    const text = await execute(files.helpers + body, data, name);
    texts.set(name, text);
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors.map((e) => e.message).join('; ')}\n${text}`);
      const obj: unknown = doc.toJS();
      if (obj === null || obj === undefined) continue;
      if (!isPlainObject(obj) || typeof obj['kind'] !== 'string' || typeof obj['apiVersion'] !== 'string') {
        throw new Error(`${name}: a document without apiVersion/kind`);
      }
      manifests.push({ ...(obj as unknown as Manifest), template: name });
    }
  }
  const notes = files.notes === null ? '' : await execute(files.helpers + files.notes, data, 'NOTES.txt');
  return { manifests, texts, notes };
}
