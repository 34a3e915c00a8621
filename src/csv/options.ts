// --delimiter and --encoding, declared the same way on every command that reads a CSV (enrich's
// --input, search's and lookalike's --exclude, lookalike's --seeds). Both are sniffed when absent.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ENCODING_CHOICES, type EncodingChoice } from './read.js';

export interface CsvFlags {
  delimiter?: string;
  encoding?: EncodingChoice;
}

function parseDelimiter(raw: string): string {
  const value = raw === '\\t' || raw === 'tab' ? '\t' : raw;
  if ([...value].length !== 1)
    throw new InvalidArgumentError(`--delimiter must be one character, got "${raw}"`);
  return value;
}

/** Adds --delimiter and --encoding; `what` names the files they apply to in the help. */
export function addCsvOptions(command: Command, what: string): Command {
  return command
    .option(
      '--delimiter <char>',
      `${what}: field delimiter, e.g. ; or tab (default: sniffed)`,
      parseDelimiter,
    )
    .addOption(
      new Option('--encoding <enc>', `${what}: text encoding (default: sniffed)`).choices(ENCODING_CHOICES),
    );
}
