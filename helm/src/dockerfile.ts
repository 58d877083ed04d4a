// A small reader of the Dockerfile for its static checks (helm/test/dockerfile.test.ts): instructions
// with their continuation lines joined, comments dropped, grouped by stage. Not a full parser: no
// heredocs, no escape-directive changes (the repository's Dockerfile uses neither).

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

export interface Stage {
  readonly from: string;
  readonly name: string | null;
  readonly instructions: readonly Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue; // a comment inside a continued instruction
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  if (current !== '') logical.push(current);

  const stages: { from: string; name: string | null; instructions: Instruction[] }[] = [];
  const globalArgs = new Map<string, string>(); // ARGs before the first FROM, usable in FROM
  for (const line of logical) {
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (m === null) continue;
    const keyword = (m[1] ?? '').toUpperCase();
    const args = m[2] ?? '';
    if (keyword === 'ARG' && stages.length === 0) {
      const a = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(args);
      if (a !== null) globalArgs.set(a[1] ?? '', a[2] ?? '');
    } else if (keyword === 'FROM') {
      const f = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (f === null) throw new Error(`FROM not understood: ${args}`);
      const from = (f[1] ?? '').replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (whole, name: string) => globalArgs.get(name) ?? whole);
      stages.push({ from, name: f[2] ?? null, instructions: [] });
    } else if (stages.length > 0) {
      stages[stages.length - 1]?.instructions.push({ keyword, args });
    }
  }
  return stages;
}
