// `company-data lookalike`: companies similar to a seed domain, ranked, optionally with why.
import type { Command } from 'commander';
import type { Filters } from '../api/filters.js';
import { type LookalikeRequest, MAX_K } from '../api/lookalike.js';
import type { Row } from '../api/search.js';
import { type CommandKit, parseIntOption } from '../command-kit.js';
import { Problem } from '../problem.js';
import {
  addFilterOptions,
  explainProblem,
  type FilterFlags,
  fieldsForChecks,
  filtersFromFlags,
} from '../search/options.js';
import type { Context } from '../types.js';

export interface LookalikeFlags extends Omit<FilterFlags, 'operator'> {
  k?: number;
  include?: string;
  evidence?: boolean;
}

export function register(program: Command, kit: CommandKit): void {
  const command = program
    .command('lookalike')
    .description('Find companies similar to a seed domain, ranked by similarity')
    .argument('<domain>', 'the seed: a domain or URL, e.g. acme-shoes.com');
  addFilterOptions(command, false)
    .option('-k <n>', `number of candidates, 1-${MAX_K} (service default 10)`, parseIntOption('-k', 1, MAX_K))
    .option('--include <fields>', 'comma-separated fields per candidate (see `company-data fields`)')
    .option('--evidence', 'say why each candidate matched (shared technologies, same category, ...)')
    .addHelpText(
      'after',
      `
Output: a ranked table (rank, domain, score, the included fields, and with --evidence a
short "why", which replaces the default fields unless --include names some); -o json gives the whole response with the full evidence; -o ndjson one
candidate per line; -o csv the table's columns. A seed without lookalikes is not an error:
it says so on stderr, charges nothing and exits 0 (-o json prints {"found": false, ...}).

Examples:
  $ company-data --sandbox lookalike acme-shoes.com -k 5 --evidence
  $ company-data --sandbox lookalike https://www.acme-shoes.com/ --filter country=US --include domain,company_name,tech
  $ company-data --sandbox lookalike acme-shoes.com -o json`,
    )
    .action(kit.withContext(runLookalike));
}

/** Normalises the seed and checks the flags; throws a usage Problem before anything is sent. */
export async function planLookalike(
  ctx: Context,
  seedInput: string,
  flags: LookalikeFlags,
): Promise<LookalikeRequest> {
  const [{ normaliseDomain }, { parseInclude, validateFilters, validateInclude }] = await Promise.all([
    import('../domain.js'),
    import('../api/filters.js'),
  ]);
  const seed = normaliseDomain(seedInput);
  if (!seed.ok) {
    throw new Problem({
      code: 'invalid_domain',
      title: 'Invalid seed domain',
      detail: `"${seedInput}" ${seed.reason}`,
      hint: 'Give a company domain such as acme-shoes.com, or its http(s) URL.',
      source: 'client',
    });
  }
  let filters: Filters = filtersFromFlags(flags);
  const include = flags.include !== undefined ? parseInclude(flags.include) : undefined;
  const fields = await fieldsForChecks(ctx);
  if (fields) {
    filters = validateFilters(filters, fields);
    if (include) validateInclude(include, fields, 'lookalike');
  }
  return { seed: seed.domain, k: flags.k, filters, include, evidence: Boolean(flags.evidence) };
}

function roundScore(score: unknown): unknown {
  return typeof score === 'number' ? Math.round(score * 1000) / 1000 : score;
}

/** The columns a person sees: rank, domain, score, the included fields, and "why". */
function tableColumns(request: LookalikeRequest, candidates: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of candidates) for (const key of Object.keys(row)) seen.add(key);
  // With --evidence and no --include, the "why" needs the room more than the default fields
  // do (they stay in every other format); --include brings any of them back.
  const defaults = request.evidence ? [] : [...seen].filter((k) => k !== 'evidence');
  const fields = request.include ?? defaults;
  const columns = [
    'rank',
    'domain',
    'score',
    ...fields.filter((f) => !['rank', 'domain', 'score'].includes(f)),
  ];
  return request.evidence ? [...columns, 'why'] : columns;
}

export async function runLookalike(ctx: Context, seedInput: string, flags: LookalikeFlags): Promise<number> {
  const request = await planLookalike(ctx, seedInput, flags);
  const [{ adaptLookalikeResponse, fetchLookalikes }, { summariseEvidence }, format] = await Promise.all([
    import('../api/lookalike.js'),
    import('../search/evidence.js'),
    import('../output/format.js'),
  ]);
  let response: Awaited<ReturnType<typeof fetchLookalikes>>;
  try {
    response = await fetchLookalikes(ctx, request);
  } catch (error) {
    throw await explainProblem(ctx, error, { filters: request.filters, limit: request.k });
  }
  const result = adaptLookalikeResponse(response.data);
  if (!result) {
    format.printUnrecognised(ctx, response, 'lookalike response has no recognisable list of candidates');
    return 0;
  }
  const mode = format.formatOf(ctx);
  if (!result.found) {
    ctx.io.info(`no lookalikes available for ${request.seed}; nothing charged`);
    if (mode === 'json') format.printJson(ctx, result.document);
    return 0;
  }
  if (mode === 'json') format.printJson(ctx, result.document);
  else if (mode === 'ndjson') format.printList(ctx, result.candidates);
  else {
    const rows = result.candidates.map((c) => ({
      ...c,
      score: mode === 'table' ? roundScore(c.score) : c.score,
      why: request.evidence ? summariseEvidence(c.evidence) : undefined,
    }));
    format.printList(ctx, rows, { columns: tableColumns(request, result.candidates) });
  }
  if (result.candidates.length === 0) ctx.io.info(`No lookalikes for ${request.seed} match.`);
  else
    ctx.io.info(
      `${result.candidates.length} lookalike${result.candidates.length === 1 ? '' : 's'} of ${request.seed}`,
    );
  format.printCredits(ctx, response.credits);
  return 0;
}
