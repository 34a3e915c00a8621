// Numbers for people: "20,000" as en-US writes it. Whole numbers are grouped with a regex: the
// first Intl.NumberFormat of a process loads ICU's number data, 10-25 ms of CPU that a command
// printing a count or a batch summary would otherwise pay (docs/performance.md). Anything else
// (fractions, huge values) goes through Intl, built on first use.

let numberFormat: Intl.NumberFormat | undefined;

export function groupDigits(value: number): string {
  if (Number.isSafeInteger(value) && !Object.is(value, -0))
    return String(value).replace(/\B(?=(\d{3})+$)/g, ',');
  numberFormat ??= new Intl.NumberFormat('en-US');
  return numberFormat.format(value);
}
