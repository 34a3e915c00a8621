// What one paid answer charged, read the safe way. The service reports a charge in a header, in
// the body, or both (the spec names neither: src/http/credits.ts reads them by meaning); a proxy,
// a bug or a second implementation may report a figure that cannot be right. When the client is
// unsure it assumes the dearer case:
//
//   - the spec's own rule first: a domain or a lookalike not found costs nothing, whatever the
//     figures say;
//   - no figure at all: the whole hold (the worst case) counts as charged;
//   - every figure a whole number from 0 to the hold: the largest counts (a body and a header that
//     disagree are told on stderr with -v);
//   - any other figure (negative, fractional, not a number, above the hold): the attempt is kept
//     as possibly charged at the larger of the hold and the figure; a figure above the hold also
//     stops a run of many requests (it would pass a cap the client believed it held).

import type { DomainResult } from '../api/types.js';
import { type BodyCredits, type Figure, readBodyCredits } from '../http/credits.js';
import { Problem } from '../problem.js';
import { plural } from '../text.js';
import type { Credits } from '../types.js';

const credits = (n: number) => plural(n, 'credit');

export type { Figure };

/** What an answer reported about its cost. */
export interface Reported {
  figures: readonly Figure[];
  /** The spec says nothing is charged (a domain or lookalike not found). */
  free?: boolean;
  /** The balance the answer reported after its charge (header or body). */
  remaining?: number;
}

export type Reading =
  | { kind: 'charged'; credits: number; note?: string }
  | { kind: 'unknown'; credits: number; why: string; aboveHold: boolean };

/** A figure as a number when it is one (a number, or a string of one, trimmed); else undefined. */
export function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * The charge of one answer under a hold of `held` credits. `backed`: the request carried the hold
 * as its max_credits (a domain lookup), so a charge above it cannot be right; elsewhere the spec
 * publishes no price, and a whole charge above the hold is the price learnt, counted as charged.
 */
export function readCharge(reported: Reported, held: number, backed = false): Reading {
  if (reported.free) return { kind: 'charged', credits: 0 };
  const figures = reported.figures.filter((f) => f.value !== undefined && f.value !== null);
  if (figures.length === 0) return { kind: 'charged', credits: held };
  let largest = 0;
  const wrong: string[] = [];
  let aboveHold = false;
  for (const figure of figures) {
    const n = numberOf(figure.value);
    if (n !== undefined && Number.isFinite(n)) largest = Math.max(largest, n);
    if (n === undefined || !Number.isFinite(n))
      wrong.push(`${figure.where} ${shown(figure.value)} is not a number`);
    else if (n < 0) wrong.push(`${figure.where} ${shown(figure.value)} is negative`);
    else if (!Number.isInteger(n)) wrong.push(`${figure.where} ${shown(figure.value)} is not a whole number`);
    else if (n > held && backed) {
      aboveHold = true;
      wrong.push(`${figure.where} ${shown(figure.value)} is above the ${credits(held)} held`);
    }
  }
  if (wrong.length > 0) {
    return { kind: 'unknown', credits: Math.max(held, Math.ceil(largest)), why: wrong.join('; '), aboveHold };
  }
  const values = new Set(figures.map((f) => numberOf(f.value)));
  const note =
    values.size > 1
      ? `the answer reports different charges (${figures.map((f) => `${f.where} ${shown(f.value)}`).join(', ')}): ${credits(largest)} counted`
      : undefined;
  return { kind: 'charged', credits: largest, note };
}

/** The figures of the headers alone (a search, a breakdown, a lookalike, `api`). */
export function headerFigures(headers: Credits): Figure[] {
  const figures: Figure[] = [];
  const value = headers.charged ?? headers.chargedText;
  if (value !== undefined) figures.push({ where: `header ${headers.chargedName ?? 'of the charge'}`, value });
  return figures;
}

/**
 * What an answer reports: the body's figures, read by meaning, and the headers'. `free`: the
 * spec's rule that a domain or lookalike not found costs nothing.
 */
export function reportedOf(body: unknown, headers: Credits, free = false): Reported {
  return reportedFrom(readBodyCredits(body), headers, free);
}

/** The same, from a body's figures read already (a domain answer's adapter keeps only them). */
export function reportedFrom(read: BodyCredits, headers: Credits, free = false): Reported {
  return {
    figures: [...read.charged, ...headerFigures(headers)],
    free,
    remaining: headers.remaining ?? read.remaining,
  };
}

/** A domain answer: not found costs nothing (the spec), whatever its figures say. */
export function domainReported(answer: { result: DomainResult; credits: Credits }): Reported {
  return reportedFrom(answer.result.reported ?? { charged: [] }, answer.credits, !answer.result.found);
}

/** A search, breakdown, lookalike or `api` answer, its body as the service sent it. */
export function answerReported(answer: { data: unknown; credits: Credits }, free = false): Reported {
  return reportedOf(answer.data, answer.credits, free);
}

/** The problem that stops a run after a charge above what was held. */
export function chargeAboveHold(why: string): Problem {
  return new Problem({
    code: 'charge_above_hold',
    title: 'The service reported a charge above what was held',
    detail: `${why}; no further request is sent, since the caps can no longer be trusted to hold`,
    source: 'client',
  });
}
