// `npm run render -w @vms/helm -- [-f values.yaml ...] [--name RELEASE] [--namespace NS]`: prints the
// chart's manifests like `helm template` (see render.ts for what differs).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderChart } from './render.ts';

const args = process.argv.slice(2);
const valueFiles: string[] = [];
let releaseName = 'vms';
let namespace = 'default';
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const next = (): string => {
    const v = args[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    return v;
  };
  if (a === '-f' || a === '--values') valueFiles.push(resolve(process.env['INIT_CWD'] ?? process.cwd(), next()));
  else if (a === '--name') releaseName = next();
  else if (a === '--namespace' || a === '-n') namespace = next();
  else throw new Error(`unknown argument ${a}`);
}
const chartDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'gb28181-cluster');
const rendered = await renderChart(chartDir, { valueFiles, releaseName, namespace });
for (const [name, text] of rendered.texts) {
  if (text.trim() === '') continue;
  process.stdout.write(`---\n# Source: gb28181-cluster/templates/${name}\n${text.replace(/^\s*\n/, '')}\n`);
}
