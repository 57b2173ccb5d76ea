/**
 * A pattern that matches exactly the whole numbers from 1 to `max`, written without leading zeros: shorter
 * numbers with any digits, numbers as long as `max` listed one by one up to it (max is a small limit).
 */
export function wholeNumberPattern(max: number): RegExp {
  const digits = String(max).length;
  const shorter = digits > 1 ? [`[1-9]\\d{0,${digits - 2}}`] : [];
  const sameLength: string[] = [];
  for (let value = digits > 1 ? 10 ** (digits - 1) : 1; value <= max; value += 1) sameLength.push(String(value));
  return new RegExp(`^(?:${[...shorter, ...sameLength].join('|')})$`);
}
