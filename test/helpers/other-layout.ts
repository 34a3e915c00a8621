// A service in front of a sandbox whose public catalogs and account come in a second plausible
// layout (the spec leaves them "not shown"), everything else passed through: what the adapters of
// src/api/catalog-adapters.ts and src/api/account.ts must read by meaning.
//
// - GET /api/fields: `{ "data": { "fields": { "<name>": {...} } } }`, keyed by name, without
//   capabilities or plans; each field says its filter another way (a name string with its values
//   beside it, `filterable: true` with `allowed_values`, an object with `param` and `options`,
//   `true`, `false`, or nothing at all) and its facet flag under another name (`breakdown`,
//   `facetable: "yes"`, `is_facet`) or not at all; its product as an object, its price as `cost`.
// - GET /api/products: `{ "items": [...] }` with `product_id`, `title`, `field_names`, a nested
//   `price`, `is_default` on profile only, `addon` on leads only: tech says neither.
// - GET /api/me: `{ "account": { "plan": { "name" }, "credits": { "balance" }, "key_name" } }`.
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { FIELDS, PRODUCTS } from '../../src/sandbox/catalogs.js';
import { forwardTo, listenLocal } from './server.js';

type Json = Record<string, unknown>;

/** One way of saying each field's filter and facet flag (fields not named here say nothing). */
function otherField(name: string): Json {
  const field = FIELDS.find((f) => f.name === name)!;
  const values = field.filter?.values ?? [];
  const base: Json = {
    type: field.type,
    description: field.description,
    product: { id: field.product },
    cost: field.billing.credit_units,
  };
  switch (name) {
    case 'country':
      return { ...base, filter: 'country', values, breakdown: true };
    case 'site_category':
      return { ...base, filterable: true, allowed_values: values, breakdown: true };
    case 'employee_range':
      return {
        ...base,
        filter: { param: 'employee_range', options: values.map((value) => ({ value })) },
        facetable: 'yes',
      };
    case 'primary_platform':
      return { ...base, filter: true, values, is_facet: true };
    case 'tech':
      return { ...base, filter: { param: 'tech', kind: 'exact', choices: values } };
    case 'company_name':
      return { ...base, filter: false, breakdown: false };
    case 'founded_year':
      return { ...base, filterable: false };
    default:
      return base;
  }
}

export function otherFields(): Json {
  return { data: { fields: Object.fromEntries(FIELDS.map((f) => [f.name, otherField(f.name)])) } };
}

export function otherProducts(): Json {
  return {
    items: PRODUCTS.map((p) => ({
      product_id: p.id,
      title: p.description,
      field_names: p.fields,
      price: { credits: p.credit_units },
      ...(p.id === 'profile' ? { is_default: true } : {}),
      ...(p.id === 'leads' ? { addon: true } : {}),
    })),
  };
}

function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** /api/me asked of the sandbox with the caller's headers, its answer put in the other envelope. */
function accountFrom(base: string, req: IncomingMessage, res: ServerResponse): void {
  const target = new URL(base);
  const onward = request(
    { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
    (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        text += chunk;
      });
      answer.on('end', () => {
        if (answer.statusCode !== 200) {
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(text);
          return;
        }
        const me = JSON.parse(text) as Json;
        const headers = Object.fromEntries(
          Object.entries(answer.headers).filter(([name]) => name.startsWith('x-credits')),
        );
        res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(
          JSON.stringify({
            account: { plan: { name: me.plan }, credits: { balance: me.balance }, key_name: me.key_name },
          }),
        );
      });
    },
  );
  onward.on('error', () => res.destroy());
  req.pipe(onward);
}

/** Listens on loopback in front of `base` (a sandbox's URL). */
export async function startOtherLayout(base: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/api/fields') return sendJson(res, otherFields());
    if (req.method === 'GET' && path === '/api/products') return sendJson(res, otherProducts());
    if (req.method === 'GET' && path === '/api/me') return accountFrom(base, req, res);
    forwardTo(base, req, res);
  });
  return listenLocal(server);
}
