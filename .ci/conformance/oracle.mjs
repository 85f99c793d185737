// The official checker, message by message: the conformance suite's `wire-schema-valid` logic
// (dispatch by method, error code and request method; ajv with the bundled schemas), for the
// differential test. Reads JSON lines {version, message, requestMethod?} on stdin, writes one
// JSON line {errors: [...]} per input line.
//
//   node oracle.mjs SCHEMA_DIR NODE_MODULES < messages.jsonl
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import readline from 'node:readline';

const [schemaDir, nodeModules] = process.argv.slice(2);
const require = createRequire(`${nodeModules}/`);
const Ajv = require('ajv').default;
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;

const unions = new Set(['ClientRequest', 'ClientNotification', 'ClientResult', 'ClientMessage',
  'ServerRequest', 'ServerNotification', 'ServerResult', 'ServerMessage']);
const coreResultTypes = new Set(['complete', 'input_required']);
const cache = new Map();

function load(version) {
  if (cache.has(version)) return cache.get(version);
  const schema = JSON.parse(readFileSync(`${schemaDir}/${version}.json`, 'utf8'));
  const key = '$defs' in schema ? '$defs' : 'definitions';
  const defs = schema[key];
  if (version === '2025-11-25' || version === '2025-06-18') {
    for (const k of ['minimum', 'maximum', 'default']) {
      const p = defs.NumberSchema?.properties?.[k];
      if (p?.type === 'integer') p.type = 'number';
    }
  }
  const opts = { strict: false, allErrors: true };
  const ajv = String(schema.$schema).includes('2020-12') ? new Ajv2020(opts) : new Ajv(opts);
  addFormats(ajv);
  ajv.addFormat('byte', true);
  const id = `mcp://${version}/schema.json`;
  ajv.addSchema({ ...schema, $id: id });
  const methodDefs = new Map(), errorDefs = new Map(), resultDefs = new Map(), compiled = new Map();
  for (const [name, def] of Object.entries(defs)) {
    if (unions.has(name)) continue;
    const props = def.properties ?? {};
    const method = props.method?.const;
    if (typeof method === 'string') {
      methodDefs.set(method, name);
      if (name.endsWith('Request')) {
        const r = `${name.slice(0, -7)}Result`;
        if (r in defs) resultDefs.set(method, r);
      }
    }
    for (const part of props.error?.allOf ?? []) {
      const code = part.properties?.code?.const;
      if (typeof code === 'number') errorDefs.set(code, name);
    }
  }
  const t = {
    defs, methodDefs, errorDefs, resultDefs,
    validate(name, value) {
      let v = compiled.get(name);
      if (!v) { v = ajv.compile({ $ref: `${id}#/${key}/${name}` }); compiled.set(name, v); }
      return v(value) ? [] : v.errors.map((e) => `${name}${e.instancePath || ''}: ${e.message}`);
    },
  };
  cache.set(version, t);
  return t;
}

function check(version, msg, requestMethod) {
  const t = load(version);
  const pick = (...names) => names.find((n) => n in t.defs) ?? names[names.length - 1];
  if (Array.isArray(msg)) return msg.flatMap((m) => check(version, m, requestMethod));
  const o = typeof msg === 'object' && msg ? msg : {};
  if (typeof o.method === 'string') {
    return t.validate(t.methodDefs.get(o.method) ?? ('id' in o ? 'JSONRPCRequest' : 'JSONRPCNotification'), msg);
  }
  if (o.error !== undefined && o.error !== null) {
    const code = o.error.code;
    return t.validate((typeof code === 'number' ? t.errorDefs.get(code) : undefined)
      ?? pick('JSONRPCErrorResponse', 'JSONRPCError'), msg);
  }
  if (o.result !== undefined) {
    const rt = o.result?.resultType;
    let def;
    if (rt === 'input_required' && 'InputRequiredResult' in t.defs) def = 'InputRequiredResult';
    else if (rt !== 'task' && requestMethod !== undefined) def = t.resultDefs.get(requestMethod);
    if (def) {
      const errs = t.validate(def, o.result);
      if (errs.length > 0) return errs;
    }
    return t.validate(pick('JSONRPCResultResponse', 'JSONRPCResponse'), msg);
  }
  return ['JSONRPCMessage: not a valid JSON-RPC request, notification, or response'];
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const { version, message, requestMethod } = JSON.parse(line);
  process.stdout.write(JSON.stringify({ errors: check(version, message, requestMethod ?? undefined) }) + '\n');
}
