// What `doctor` recognised of the service's open shapes (docs/contract.md, "Open shapes and the
// layouts the client reads"), from free calls only: the products and fields catalogs (public) and
// the account (never charged). A user meeting a new service sees at once which layout it speaks.
// The layouts of paid answers (a record, search rows, breakdown buckets) cannot be seen without
// buying one; the last line says so.
import { accountSource, describeAccountLayout } from '../api/account.js';
import { describeFields, describeProducts, type SaidWhere } from '../api/catalog-views.js';
import { readCredits } from '../http/credits.js';
import { isProblem } from '../problem.js';
import type { ApiResponse, Client } from '../types.js';
import type { Check } from './doctor-checks.js';

const WHERE: Record<SaidWhere, string> = {
  'per entry': 'in each entry',
  catalog: 'once for the catalog',
  'not said': 'not said',
};

function check(name: string, ok: boolean, message: string, fix?: string): Check {
  return ok ? { name, status: 'pass', message } : { name, status: 'warn', message, fix };
}

const REPORT =
  'company-data may not know this layout: see README, "Troubleshooting" (a service in a layout company-data does not know).';

async function fetchFree(
  client: Client,
  path: string,
  auth: boolean,
): Promise<ApiResponse<unknown> | string> {
  try {
    return await client.request<unknown>({ method: 'GET', path, auth, spinner: false });
  } catch (error) {
    return isProblem(error) ? `${error.title} (${error.code})` : String(error);
  }
}

/** The credit headers of an answer, by name: each header read alone by readCredits. */
function creditHeaders(headers: Record<string, string>): { charged?: string; remaining?: string } {
  const found: { charged?: string; remaining?: string } = {};
  for (const [name, value] of Object.entries(headers)) {
    const read = readCredits({ [name]: value });
    if (read.charged !== undefined) found.charged ??= name;
    if (read.remaining !== undefined) found.remaining ??= name;
  }
  return found;
}

export async function layoutChecks(client: Client, canReach: boolean, hasKey: boolean): Promise<Check[]> {
  if (!canReach)
    return [{ name: 'layout', status: 'skip', message: 'not checked: the service did not answer' }];
  const checks: Check[] = [];

  const products = await fetchFree(client, '/api/products', false);
  if (typeof products === 'string')
    checks.push(check('products layout', false, `not read: ${products}`, REPORT));
  else {
    try {
      const p = describeProducts(products.data);
      const defaults =
        p.defaults === 'not said'
          ? 'the default selection not said'
          : `default ${p.defaultIds.join(', ') || 'none'} (said ${WHERE[p.defaults]})`;
      checks.push(check('products layout', p.count > 0, `${p.count} products; ${defaults}`, REPORT));
    } catch (error) {
      checks.push(check('products layout', false, isProblem(error) ? error.detail : String(error), REPORT));
    }
  }

  const fields = await fetchFree(client, '/api/fields', false);
  if (typeof fields === 'string') checks.push(check('fields layout', false, `not read: ${fields}`, REPORT));
  else {
    try {
      const f = describeFields(fields.data);
      checks.push(
        check(
          'fields layout',
          f.count > 0 && f.filters !== 'not said' && f.facets !== 'not said',
          `${f.count} fields; ${f.filterCount} filters (said ${WHERE[f.filters]}); ${f.facetCount} facets (said ${WHERE[f.facets]})`,
          REPORT,
        ),
      );
    } catch (error) {
      checks.push(check('fields layout', false, isProblem(error) ? error.detail : String(error), REPORT));
    }
  }

  if (!hasKey) {
    checks.push({ name: 'account layout', status: 'skip', message: 'not checked: no working key' });
  } else {
    const me = await fetchFree(client, '/api/me', true);
    if (typeof me === 'string')
      checks.push({ name: 'account layout', status: 'skip', message: `not read: ${me}` });
    else {
      const readable = typeof accountSource(me.data).source === 'object';
      checks.push(check('account layout', readable, describeAccountLayout(me.data), REPORT));
      const names = creditHeaders(me.headers);
      const said = [
        names.charged ? `charge in ${names.charged}` : 'no charge header recognised',
        names.remaining ? `balance in ${names.remaining}` : 'no balance header recognised',
      ].join(', ');
      checks.push(
        check('credit headers', names.charged !== undefined && names.remaining !== undefined, said, REPORT),
      );
    }
  }
  checks.push({
    name: 'answer layouts',
    status: 'skip',
    message:
      'records, search rows, breakdown buckets and lookalike candidates are seen only in paid answers; the client reads the layouts of docs/contract.md',
  });
  return checks;
}
