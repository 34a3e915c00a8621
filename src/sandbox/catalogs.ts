// The public catalogs the sandbox serves (docs/contract.md: products, fields, errors, keys).
import type { ErrorsCatalog, FieldEntry, Product } from '../api/types.js';
import { CONTRACT_VERSION, ERROR_CATALOG, PROBLEM_CONTENT_TYPE } from '../error-catalog.js';

const words = (text: string): string[] => text.trim().split(/\s+/);

// Value lists of the enum fields, most frequent first: the generator (dataset.ts) draws from them
// with Zipf-like weights, so filters and data never disagree.
export const COUNTRIES = words('US GB DE FR CA AU NL ES IT SE CH BE AT DK NO IE PL JP BR IN NZ FI PT SG MX');
export const COUNTRY_NAMES: Record<string, string> = Object.fromEntries(
  `US United States|GB United Kingdom|DE Germany|FR France|CA Canada|AU Australia|NL Netherlands|ES Spain|IT Italy
  |SE Sweden|CH Switzerland|BE Belgium|AT Austria|DK Denmark|NO Norway|IE Ireland|PL Poland|JP Japan|BR Brazil
  |IN India|NZ New Zealand|FI Finland|PT Portugal|SG Singapore|MX Mexico`
    .split('|')
    .map((entry) => [entry.trim().slice(0, 2), entry.trim().slice(3)]),
);
export const CATEGORIES = words(`fashion electronics home_garden beauty sports food_drink b2b_software travel
  health toys jewelry pets automotive media education finance`);
export const PLATFORMS = words(
  'shopify woocommerce magento bigcommerce salesforce_commerce custom prestashop shopware wix squarespace',
);
export const OTHER_TECHS =
  words(`google_analytics google_tag_manager facebook_pixel stripe paypal klaviyo hotjar
  hubspot intercom segment mailchimp zendesk gorgias yotpo trustpilot cloudflare recaptcha tiktok_pixel
  pinterest_tag afterpay klarna apple_pay google_pay algolia optimizely vwo salesforce marketo drift livechat
  tidio judge_me okendo recharge attentive postscript sentry new_relic datadog fastly akamai contentful
  onetrust cookiebot bazaarvoice`);
/** Every technology value: the commerce platforms a site runs on are technologies too. */
export const TECHS = [...PLATFORMS.filter((p) => p !== 'custom'), ...OTHER_TECHS];
export const EMPLOYEE_RANGES = ['1-10', '11-50', '51-200', '201-1000', '1001-5000', '5000+'];

export const PRODUCTS: Product[] = [
  {
    id: 'profile',
    description: 'Company profile: name, country, category, size, founding year',
    fields: ['domain', 'company_name', 'country', 'site_category', 'employee_range', 'founded_year'],
    bundles: ['starter', 'growth', 'enterprise'],
    credit_units: 1,
    default: true,
    add_on: false,
  },
  {
    id: 'tech',
    description: 'Technology: the commerce platform and the technologies detected on the site',
    fields: ['primary_platform', 'tech', 'tech_count'],
    bundles: ['growth', 'enterprise'],
    credit_units: 1,
    default: false,
    add_on: false,
  },
  {
    id: 'leads',
    description: 'Lead add-on: a named decision maker with title and e-mail address',
    fields: ['lead_name', 'lead_title', 'lead_email'],
    bundles: ['enterprise'],
    credit_units: 5,
    default: false,
    add_on: true,
  },
];

/**
 * The products as a service would list them if it did not say which ones a request without
 * `products` returns: no `default` member (the spec leaves the default selection "not shown").
 * What the engine does without `products` is unchanged.
 */
export function productsWithoutDefaults(): Array<Omit<Product, 'default'>> {
  return PRODUCTS.map(({ default: _default, ...product }) => product);
}

const ALL_CAPABILITIES = ['domains', 'search', 'lookalike'];
const PLANS_BY_PRODUCT: Record<string, string[]> = {
  profile: ['free', 'pro'],
  tech: ['pro'],
  leads: ['pro'],
};

function field(
  name: string,
  type: 'string' | 'integer' | 'string[]',
  description: string,
  options: { values?: readonly string[]; facet?: boolean } = {},
): FieldEntry {
  const product = PRODUCTS.find((p) => p.fields.includes(name));
  if (!product) throw new Error(`field ${name} belongs to no product`);
  return {
    name,
    product: product.id,
    type,
    description,
    filter: options.values ? { name, value_source: 'enum', values: [...options.values] } : null,
    facet: options.facet ?? false,
    billing: {
      product: product.id,
      credit_units: product.credit_units,
      charged: 'when the product returns data',
    },
    capabilities: product.id === 'leads' ? ['domains'] : [...ALL_CAPABILITIES],
    plans: [...PLANS_BY_PRODUCT[product.id]],
  };
}

export const FIELDS: FieldEntry[] = [
  field('domain', 'string', 'The company domain (lower case; IDN as punycode)'),
  field('company_name', 'string', 'Company name'),
  field('country', 'string', "ISO 3166-1 alpha-2 country of the company's headquarters", {
    values: COUNTRIES,
    facet: true,
  }),
  field('site_category', 'string', 'Main category of the website', { values: CATEGORIES, facet: true }),
  field('employee_range', 'string', 'Number of employees, as a range', {
    values: EMPLOYEE_RANGES,
    facet: true,
  }),
  field('founded_year', 'integer', 'Year the company was founded'),
  field('primary_platform', 'string', 'Commerce or site platform the website runs on', {
    values: PLATFORMS,
    facet: true,
  }),
  field('tech', 'string[]', 'Technologies detected on the website (a filter matches any of its values)', {
    values: TECHS,
  }),
  field('tech_count', 'integer', 'Number of technologies detected'),
  field('lead_name', 'string', 'Name of a decision maker'),
  field('lead_title', 'string', "The decision maker's job title"),
  field('lead_email', 'string', "The decision maker's e-mail address"),
];

export type SandboxKeyName = 'full' | 'restricted' | 'free' | 'empty';

export interface SandboxKey {
  key: string;
  plan: 'pro' | 'free';
  balance: number;
  capabilities: string[];
}

const EVERY_API = ['domains', 'search', 'breakdown', 'lookalike'];

export const SANDBOX_KEYS: Record<SandboxKeyName, SandboxKey> = {
  full: { key: 'cd_sandbox_full_7f3a9c2e', plan: 'pro', balance: 1_000_000, capabilities: [...EVERY_API] },
  restricted: {
    key: 'cd_sandbox_restricted_5b1d8e40',
    plan: 'pro',
    balance: 1_000_000,
    capabilities: ['domains'],
  },
  free: { key: 'cd_sandbox_free_c94e1a77', plan: 'free', balance: 1_000, capabilities: [...EVERY_API] },
  empty: { key: 'cd_sandbox_empty_0a6f3d19', plan: 'pro', balance: 0, capabilities: [...EVERY_API] },
};

export const ERRORS_RESPONSE: ErrorsCatalog = {
  contract_version: CONTRACT_VERSION,
  content_type: PROBLEM_CONTENT_TYPE,
  errors: ERROR_CATALOG.map((entry) => ({ ...entry })),
};
