// Extracts the four revisions' JSON schemas that @modelcontextprotocol/conformance bundles in
// dist/index.js (its `wire-schema-valid` check validates against them) into OUT/<rev>.json.
//
//   node schemas.mjs PATH/TO/conformance/dist/index.js OUT
//
// The bundle holds them as object literals (`Pe={$schema:...}`) mapped by `Re={"2025-03-26":Pe,
// ...}`; this finds each literal by matching braces outside strings and template literals, and
// evaluates it alone (the literals reference nothing else).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import vm from 'node:vm';

const [bundlePath, out] = process.argv.slice(2);
const src = readFileSync(bundlePath, 'utf8');
const map = /[,; ]Re=\{"2025-03-26":(\w+),"2025-06-18":(\w+),"2025-11-25":(\w+),\[\w+\]:(\w+)\}/.exec(src);
if (!map) throw new Error('schema map not found in the bundle (package layout changed?)');
const names = { '2025-03-26': map[1], '2025-06-18': map[2], '2025-11-25': map[3], '2026-07-28': map[4] };

function literalAt(start) {
  let depth = 0, i = start, quote = null;
  for (; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\') { i++; continue; }
      if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') { quote = c; continue; }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return src.slice(start, i + 1);
  }
  throw new Error('unbalanced literal');
}

mkdirSync(out, { recursive: true });
for (const [rev, name] of Object.entries(names)) {
  const m = new RegExp(`[,; ]${name}=\\{\\$schema:`).exec(src);
  if (!m) throw new Error(`schema ${name} for ${rev} not found`);
  const text = literalAt(m.index + name.length + 2);
  const schema = vm.runInNewContext(`(${text})`);
  writeFileSync(`${out}/${rev}.json`, JSON.stringify(schema, null, 1));
  console.log(`${rev}: ${Object.keys(schema.$defs ?? schema.definitions).length} definitions`);
}
