// Workbooks: a 100,000-row .xlsx in and out (`enrich --input x.xlsx --output y.xlsx`) against the
// same rows as CSV in and out, for peak RSS and time. The input is the memory figure's
// (memory.mjs: half the rows repeat a domain), written as a workbook with ExcelJS's streaming
// writer, with a leading-zero text column as spreadsheets' lists have, and its text in a table of
// shared strings as Excel and LibreOffice write it (the reader holds that table in memory).
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { enrichRun } from './batch.mjs';
import { duplicateOf, mixedDomains } from './data.mjs';

export async function workbookInput({ rows, known, scratch }) {
  const unique = rows / 2;
  const domains = mixedDomains(known, Math.min(unique, Math.floor((known.length * 4) / 3)));
  const domainOf = (k) => (k < domains.length ? domains[k] : `nf-${k}-bench.example`);
  const path = join(scratch, `workbook-${rows}.xlsx`);
  const stream = createWriteStream(path);
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream, useSharedStrings: true });
  const sheet = workbook.addWorksheet('Leads');
  sheet.addRow(['id', 'domain', 'zip', 'note']).commit();
  for (let i = 0; i < rows; i++) {
    sheet
      .addRow([i + 1, domainOf(duplicateOf(i, rows)), String(i % 100000).padStart(5, '0'), `row ${i + 1}`])
      .commit();
  }
  sheet.commit();
  await workbook.commit();
  if (!stream.closed) await once(stream, 'close');
  return path;
}

/** One batch over `input`, its output in the format of `extension`; peak RSS and time. */
export async function workbookRun({ sandbox, input, rows, concurrency, scratch, extension, tag }) {
  const run = await enrichRun({
    sandbox,
    input,
    rows,
    concurrency,
    scratch,
    tag,
    outputExtension: extension,
  });
  return {
    rows,
    peakRssMb: run.peakRssMb,
    seconds: run.seconds,
    cpuUsPerRow: run.cpuUsPerRow,
    source: run.source,
  };
}
