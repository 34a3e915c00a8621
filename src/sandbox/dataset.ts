// The sandbox's synthetic companies: generated from a seed so every run, test and benchmark sees
// the same data, with skewed distributions and gaps so search, breakdowns and coverage look real.
// Documented in docs/contract.md, section "Dataset".
import { domainToASCII } from 'node:url';
import { CATEGORIES, COUNTRIES, EMPLOYEE_RANGES, OTHER_TECHS, PLATFORMS } from './catalogs.js';

export interface Company {
  domain: string;
  company_name: string | null;
  country: string | null;
  site_category: string | null;
  employee_range: string | null;
  founded_year: number | null;
  primary_platform: string | null;
  tech: string[];
  tech_count: number | null;
  lead_name: string | null;
  lead_title: string | null;
  lead_email: string | null;
  keywords: string[];
  is_ecommerce: boolean;
  popularity: number;
}

export interface Dataset {
  seed: number;
  /** Ordered by popularity: companies[i].popularity === i + 1. */
  companies: Company[];
  byDomain: Map<string, Company>;
}

const words = (text: string): string[] => text.trim().split(/\s+/);

// The value lists live with the catalogs (their enums); CATEGORY_KEYWORDS must cover CATEGORIES.
export { COUNTRY_NAMES } from './catalogs.js';

export const CATEGORY_KEYWORDS: Record<string, string[]> = {
  fashion: words('shoes sneakers apparel clothing dresses denim boots accessories streetwear'),
  electronics: words('gadgets headphones laptops smartphones cameras audio chargers gaming'),
  home_garden: words('furniture decor kitchen garden lighting bedding plants tools'),
  beauty: words('skincare cosmetics makeup fragrance haircare nails organic'),
  sports: words('fitness running cycling yoga outdoor camping football gym'),
  food_drink: words('coffee tea wine snacks chocolate beer bakery spices'),
  b2b_software: words('saas analytics crm automation payroll security devops api'),
  travel: words('hotels flights tours vacation booking hostels cruises'),
  health: words('supplements vitamins pharmacy wellness telehealth nutrition'),
  toys: words('toys games puzzles plush kids educational'),
  jewelry: words('rings necklaces watches silver gold earrings'),
  pets: words('dogs cats petfood aquarium grooming'),
  automotive: words('car parts tyres motorcycle detailing'),
  media: words('news magazine podcasts streaming publishing'),
  education: words('courses tutoring languages elearning books'),
  finance: words('banking insurance payments lending accounting'),
};
// Share of each category that sells online (is_ecommerce).
const ECOMMERCE_SHARE: Record<string, number> = Object.fromEntries(
  words(`fashion:0.92 electronics:0.88 home_garden:0.86 beauty:0.9 sports:0.85 food_drink:0.78 b2b_software:0.08
    travel:0.3 health:0.55 toys:0.88 jewelry:0.9 pets:0.86 automotive:0.5 media:0.1 education:0.12 finance:0.05`)
    .map((entry) => entry.split(':'))
    .map(([category, share]) => [category, Number(share)]),
);
const SITE_BUILDERS = words('custom wix squarespace');
const EMPLOYEE_WEIGHTS = [30, 32, 20, 12, 4, 2];

const SYLLABLES = words(`al bel cor dan el fin gar hal ion jun kel lum mar nor ol pel quin ros sol tal ur vel
  wen xan yor zen bra cre dri flo gre pri stra tri vio lux no ter via ora kin mo ra ta li sa ne ve do ka bo
  lo mi fa ri su pa ge ko zu ha be`);
const NAME_SUFFIXES = words('shop store co labs direct hq online supply goods studio');
const GLOBAL_TLDS = words('com co.uk de io shop co net store fr nl com.au ca es it se');
const TLD_WEIGHTS = [50, 8, 8, 6, 4, 3, 3, 2, 3, 2, 2, 2, 1, 1, 1];
const COUNTRY_TLDS: Record<string, string> = Object.fromEntries(
  words('US:com GB:co.uk DE:de FR:fr CA:ca AU:com.au NL:nl ES:es IT:it SE:se').map((e) => e.split(':')),
);
const FIRST_NAMES = words(
  'Anna Ben Clara David Emma Felix Grace Hugo Iris Jonas Karen Liam Maya Noah Olga Paul',
);
const LAST_NAMES = words('Smith Jones Müller Martin Brown Garcia Rossi Larsen Novak Kim Silva Dubois Walsh');
const LEAD_TITLES = `Head of E-commerce|Marketing Director|Founder|CEO|CTO|Head of Growth|VP Sales
  |Digital Marketing Manager|Operations Manager`
  .split('|')
  .map((t) => t.trim());
const DROPPABLE = words('company_name country site_category employee_range founded_year tech leads');

/** Small, fast, seedable PRNG (mulberry32): identical sequences for identical seeds. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;

/** A sampler over values with the given weights (cumulative table + binary search). */
function weighted<T>(values: readonly T[], weights: readonly number[]): (rng: Rng) => T {
  const cumulative: number[] = [];
  let total = 0;
  for (const w of weights) {
    total += w;
    cumulative.push(total);
  }
  return (rng) => {
    const target = rng() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    return values[lo];
  };
}

const zipf = <T>(values: readonly T[], s: number) =>
  weighted(
    values,
    values.map((_, i) => 1 / (i + 1) ** s),
  );

const pickCountry = zipf(COUNTRIES, 1.1);
const pickCategory = zipf(CATEGORIES, 0.7);
const pickPlatform = zipf(PLATFORMS, 1.0);
const pickBuilder = zipf(SITE_BUILDERS, 1.0);
const pickTech = zipf(OTHER_TECHS, 0.85);
const pickEmployees = weighted(EMPLOYEE_RANGES, EMPLOYEE_WEIGHTS);
const pickTld = weighted(GLOBAL_TLDS, TLD_WEIGHTS);
const pick = <T>(rng: Rng, values: readonly T[]): T => values[Math.floor(rng() * values.length)];
const titleCase = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

function makeLabel(rng: Rng, category: string): string[] {
  // Mostly three syllables: short names are few, and a million companies need room to be unique.
  const length = rng();
  let name = pick(rng, SYLLABLES) + pick(rng, SYLLABLES);
  if (length > 0.1) name += pick(rng, SYLLABLES);
  if (length > 0.8) name += pick(rng, SYLLABLES);
  const parts = [name];
  const r = rng();
  if (r < 0.2) parts.push(pick(rng, CATEGORY_KEYWORDS[category]));
  else if (r < 0.4) parts.push(pick(rng, NAME_SUFFIXES));
  return parts;
}

function makeTech(rng: Rng, platform: string | null): string[] {
  const tech: string[] = platform && platform !== 'custom' ? [platform] : [];
  const wanted = 2 + Math.floor(rng() ** 1.6 * 13);
  for (let tries = 0; tech.length < wanted && tries < wanted * 4; tries++) {
    const t = pickTech(rng);
    if (!tech.includes(t)) tech.push(t);
  }
  return tech;
}

function uniqueDomain(rng: Rng, category: string, tld: string, taken: Map<string, Company>): string[] {
  let label = makeLabel(rng, category);
  for (let retry = 0; taken.has(`${label.join('-')}.${tld}`); retry++) {
    // A few fresh draws first; past that the name space is crowded here, so number the name.
    if (retry < 4) label = makeLabel(rng, category);
    else if (retry === 4) label.push('2');
    else label[label.length - 1] = String(retry - 2);
  }
  return label;
}

const emailPart = (name: string) => name.toLowerCase().replace('ü', 'ue');
const FIRST_EMAIL = FIRST_NAMES.map(emailPart);
const LAST_EMAIL = LAST_NAMES.map(emailPart);
// Shared among companies (a million records are mostly memory): full names, and keyword lists by
// their contents. Records are read-only once generated.
const FULL_NAMES = FIRST_NAMES.map((first) => LAST_NAMES.map((last) => `${first} ${last}`));
const keywordLists = new Map<string, string[]>();

function keywordsFor(rng: Rng, category: string): string[] {
  const pool = CATEGORY_KEYWORDS[category];
  const picked = [pick(rng, pool)];
  for (let i = 0; i < 2; i++) {
    const k = pick(rng, pool);
    if (!picked.includes(k)) picked.push(k);
  }
  const key = picked.join(' ');
  const shared = keywordLists.get(key);
  if (shared) return shared;
  keywordLists.set(key, picked);
  return picked;
}

function generateCompany(rng: Rng, taken: Map<string, Company>): Company {
  const country = pickCountry(rng);
  const category = pickCategory(rng);
  const ecommerce = rng() < (ECOMMERCE_SHARE[category] ?? 0.5);
  const tld = rng() < 0.5 && COUNTRY_TLDS[country] ? COUNTRY_TLDS[country] : pickTld(rng);
  const label = uniqueDomain(rng, category, tld, taken);
  const domain = `${label.join('-')}.${tld}`;
  const platform = ecommerce ? pickPlatform(rng) : rng() < 0.25 ? pickBuilder(rng) : null;
  const tech = makeTech(rng, platform);
  const first = Math.floor(rng() * FIRST_NAMES.length);
  const last = Math.floor(rng() * LAST_NAMES.length);
  const keywords = keywordsFor(rng, category);
  const company: Company = {
    domain,
    company_name: label.map(titleCase).join(' '),
    country,
    site_category: category,
    employee_range: pickEmployees(rng),
    founded_year: 2024 - Math.floor(rng() ** 1.8 * 70),
    primary_platform: platform,
    tech,
    tech_count: tech.length,
    lead_name: FULL_NAMES[first][last],
    lead_title: pick(rng, LEAD_TITLES),
    lead_email: `${FIRST_EMAIL[first]}.${LAST_EMAIL[last]}@${domain}`,
    keywords,
    is_ecommerce: ecommerce,
    popularity: 0,
  };
  taken.set(domain, company);
  // One record in ten has gaps, so coverage and missing counts mean something.
  if (rng() < 0.1) dropFields(rng, company);
  return company;
}

function dropFields(rng: Rng, c: Company): void {
  const howMany = 1 + Math.floor(rng() * 3);
  for (let i = 0; i < howMany; i++) {
    const field = pick(rng, DROPPABLE);
    if (field === 'tech') {
      c.tech = [];
      c.tech_count = null;
    } else if (field === 'leads') {
      c.lead_name = c.lead_title = c.lead_email = null;
    } else {
      (c as unknown as Record<string, null>)[field] = null;
    }
  }
}

const escapeName = 'Escape \x1b]0;pwned\x07Test \x1b[31mCorp';

/** Fixed records present in every dataset (docs/contract.md, "Dataset"). name -> domain. */
export const SHOWCASE: Record<string, string> = {
  acme: 'acme-shoes.com',
  globex: 'globex.io',
  initech: 'initech.co.uk',
  umbrella: 'umbrella-health.de',
  idn: domainToASCII('münchner-kaffee.de'),
  escape: 'escape-test.com',
  lonely: 'lonely-seed.com',
};
/** A syntactically valid domain that no dataset contains (.example is reserved, RFC 2606). */
export const MISSING_DOMAIN = 'no-such-company.example';

// The showcase records, one per line: domain | company_name | country | site_category |
// employee_range | founded_year | primary_platform | tech | lead name | lead title | keywords | rank.
// An empty cell is a missing value; `rank` orders them among generated companies (higher = more popular).
const FIXED_TABLE = `
${SHOWCASE.acme}|Acme Shoes|US|fashion|51-200|2009|shopify|shopify klaviyo google_analytics stripe paypal hotjar yotpo gorgias|Jane Doe|Head of E-commerce|shoes sneakers boots|9
${SHOWCASE.globex}|Globex Corporation|US|b2b_software|1001-5000|1989|||Hank Scorpio|CEO|saas automation|8
${SHOWCASE.initech}|Initech|GB|||1998|custom|google_analytics hubspot zendesk||||5
${SHOWCASE.umbrella}|Umbrella Health|DE|health|201-1000|2003|magento|magento google_analytics klarna paypal cookiebot|Alice Abernathy|Marketing Director|pharmacy supplements vitamins|6
${SHOWCASE.idn}|Münchner Kaffee|DE|food_drink|11-50|2015|shopware|shopware paypal klarna google_analytics|Lena Huber|Founder|coffee tea|5
${SHOWCASE.escape}|${escapeName}|US|electronics|11-50|2020|woocommerce|woocommerce stripe google_analytics|Eve Mallory|CTO|gadgets audio|4
${SHOWCASE.lonely}|Lonely Seed|SE||1-10|2022||||||3`;

interface Fixed {
  company: Company;
  rank: number;
}

function parseFixed(line: string): Fixed {
  const cell = line.split('|').map((text) => text.trim() || null);
  if (cell.length !== 12) throw new Error(`showcase row has ${cell.length} cells, not 12: ${cell[0]}`);
  const [domain, name, country, category, employees, founded, platform, tech, leadName, leadTitle] = cell;
  const techList = tech ? words(tech) : [];
  const company: Company = {
    domain: domain ?? '',
    company_name: name,
    country,
    site_category: category,
    employee_range: employees,
    founded_year: founded ? Number(founded) : null,
    primary_platform: platform,
    tech: techList,
    tech_count: techList.length || null,
    lead_name: leadName,
    lead_title: leadTitle,
    lead_email: leadName ? `${leadName.toLowerCase().replace(' ', '.')}@${domain}` : null,
    keywords: cell[10] ? words(cell[10]) : [],
    is_ecommerce: platform !== null && platform !== 'custom',
    popularity: 0,
  };
  return { company, rank: Number(cell[11]) };
}

/** The last few datasets generated, by seed and size: see generateDataset. */
const recent = new Map<string, Dataset>();
const RECENT = 4;

/**
 * Same seed and size -> the same dataset. A process that starts sandboxes again (the test suite
 * starts hundreds, most of one size) reuses the last few datasets, and with them the search and
 * lookalike indexes built on each (kept by dataset, src/sandbox/search-index.ts and
 * engine-lookalike.ts): a dataset is read-only once generated.
 */
export function generateDataset(options: { seed?: number; companies?: number } = {}): Dataset {
  const key = `${options.seed ?? 42}:${options.companies ?? 10_000}`;
  let dataset = recent.get(key);
  if (!dataset) {
    dataset = buildDataset(options);
    recent.set(key, dataset);
    if (recent.size > RECENT) recent.delete(recent.keys().next().value as string);
  }
  return dataset;
}

/** A dataset generated afresh: same seed and size -> an identical one. Showcase records are always included. */
export function buildDataset(options: { seed?: number; companies?: number } = {}): Dataset {
  const seed = options.seed ?? 42;
  const fixed = FIXED_TABLE.trim().split('\n').map(parseFixed);
  const size = Math.max(fixed.length, Math.floor(options.companies ?? 10_000));
  const rng = mulberry32(seed);
  const byDomain = new Map<string, Company>(fixed.map((f) => [f.company.domain, f.company]));
  const score = new Float64Array(size);
  fixed.forEach((f, i) => {
    score[i] = f.rank;
  });
  const companies: Company[] = fixed.map((f) => f.company);
  for (let i = fixed.length; i < size; i++) {
    const c = generateCompany(rng, byDomain);
    // Bigger companies tend to be better known; the random part keeps the order mixed.
    const employees = c.employee_range ? EMPLOYEE_RANGES.indexOf(c.employee_range) : 0;
    score[i] = employees * 0.8 + rng() * 4;
    companies.push(c);
  }
  const sorted = popularityOrder(score).map((index, rank) => {
    const c = companies[index];
    c.popularity = rank + 1;
    return c;
  });
  return { seed, companies: sorted, byDomain };
}

/** Indices by descending score, ties by index; a numeric typed-array sort (no comparator) for speed. */
function popularityOrder(score: Float64Array): number[] {
  const n = score.length;
  // Scores are below 16; 1e6 steps per unit times 2^22 indices stays within 2^53.
  if (n > 2 ** 22) return Array.from({ length: n }, (_, i) => i).sort((a, b) => score[b] - score[a] || a - b);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = Math.round((16 - score[i]) * 1e6) * 2 ** 22 + i;
  keys.sort();
  return Array.from(keys, (key) => key % 2 ** 22);
}
