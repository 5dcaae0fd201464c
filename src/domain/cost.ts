/** Event costs as the plugin stores and shows them (reference resources.md §5.3, behaviour.md §8.5). */

export interface CostCurrency {
  symbol: string;
  position: '' | 'prefix' | 'postfix';
}

const NUMBER = /\d+(?:[.,]\d+)*/g;
const SITE_DEFAULT: CostCurrency = { symbol: '$', position: 'prefix' };

/** A cost string's numbers as canonical strings (`25,55` → `25.55`, `1,000` → `1000`). */
function numbersIn(cost: string): string[] {
  return (cost.match(NUMBER) ?? []).map((n) => {
    const decimalComma = /^\d+,\d{1,2}$/.test(n);
    const normal = decimalComma ? n.replace(',', '.') : n.replace(/,/g, '');
    return String(Number(normal));
  });
}

/** Significant digits PHP writes when it makes a float into text (its `precision` setting's default). */
const PHP_PRECISION = 14;

/**
 * A JSON number as the text PHP makes of it, as the plugin stores a cost sent as one. A whole number is an integer to
 * PHP's JSON decoder and is written in full (`20`); any other is a float, written to 14 significant digits in `%G`
 * style (`20.5`, `0.1`, `1.0E+21`, `1.0E-5`). A whole number sent as a float (`20.0`) is written alike by PHP below
 * 10^14, and beyond that JSON.parse leaves no way to tell the two apart.
 */
export function phpNumberText(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  const [mantissa, exponent] = n.toExponential(PHP_PRECISION - 1).split('e') as [string, string];
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace(/^-/, '').replace('.', '').replace(/0+$/, '') || '0';
  const point = Number(exponent) + 1; // the point's place after the first digit's, as PHP's zend_gcvt counts it
  let text: string;
  if (point < -3 || point > PHP_PRECISION) {
    const power = point - 1;
    text = `${digits[0]}.${digits.slice(1) || '0'}E${power < 0 ? '-' : '+'}${Math.abs(power)}`;
  } else if (point <= 0) {
    text = `0.${'0'.repeat(-point)}${digits}`;
  } else {
    const whole = digits.slice(0, point).padEnd(point, '0');
    const fraction = digits.slice(point);
    text = fraction ? `${whole}.${fraction}` : whole;
  }
  return negative ? `-${text}` : text;
}

const SYMBOL_CHAR = /[^\d\s.,]/;
const AMOUNT_CHAR = /[\d.,\s–-]/;

/**
 * The text before and after a cost's amount (`$` of `$ 20`, `€` of `5-25 €`), or null when it is not symbol, amount,
 * symbol: `/^\s*([^\d\s.,]*)\s*[\d.,\s–-]+\s*([^\d\s.,]*)\s*$/`, read in one pass. As a pattern its runs of white
 * space could be split between three parts in every way, each tried when the match failed: 400 spaces before `1x1`
 * took 350 s.
 */
function symbolsAround(cost: string): { prefix: string; suffix: string } | null {
  const text = cost.trim();
  let amount = 0;
  while (amount < text.length && SYMBOL_CHAR.test(text[amount]!)) amount++;
  let suffix = amount;
  while (suffix < text.length && AMOUNT_CHAR.test(text[suffix]!)) suffix++;
  if (suffix === amount) return null;
  let end = suffix;
  while (end < text.length && SYMBOL_CHAR.test(text[end]!)) end++;
  return end === text.length ? { prefix: text.slice(0, amount), suffix: text.slice(suffix, end) } : null;
}

/** The currency symbol the given costs share (before or after the number), as the plugin parses it at write time. */
export function currencyOf(costs: string[]): CostCurrency {
  const parts = costs.filter((c) => /\d/.test(c)).map((c) => symbolsAround(c) ?? { prefix: '', suffix: '' });
  if (parts.length === 0) return { symbol: '', position: '' };
  const first = parts[0]!;
  if (first.prefix && parts.every((p) => p.prefix === first.prefix)) return { symbol: first.prefix, position: 'prefix' };
  if (first.suffix && parts.every((p) => p.suffix === first.suffix)) return { symbol: first.suffix, position: 'postfix' };
  return { symbol: '', position: '' };
}

/** `cost_details.values`: every number found, as strings, sorted numerically; a cost with no number gives its word. */
export function costValues(costs: string[]): string[] {
  const values = new Set<string>();
  for (const cost of costs) {
    const numbers = numbersIn(cost);
    if (numbers.length > 0) numbers.forEach((n) => values.add(n));
    else if (cost.trim()) values.add(cost.trim().toLowerCase());
  }
  return [...values].sort((a, b) => {
    const na = Number(a);
    const nb = Number(b);
    if (Number.isNaN(na) || Number.isNaN(nb)) return Number.isNaN(na) ? -1 : 1;
    return na - nb;
  });
}

/**
 * The `cost` string: lowest – highest value, each with the currency symbol (the event's, else the site default); 0
 * shows as `Free`; words as written. With `currency` null the values go bare, as the plugin formats them for JSON-LD.
 */
export function formatCost(costs: string[], currency: CostCurrency | null): string {
  const numeric = costValues(costs).filter((v) => !Number.isNaN(Number(v))).map(Number);
  if (numeric.length === 0) {
    const words = costs.map((c) => c.trim()).filter(Boolean);
    return words.length > 0 ? words[0]! : '';
  }
  const { symbol, position } = currency === null ? { symbol: '', position: '' } : currency.symbol ? currency : SITE_DEFAULT;
  const show = (n: number) => (n === 0 ? 'Free' : position === 'postfix' ? `${n}${symbol}` : `${symbol}${n}`);
  const low = Math.min(...numeric);
  const high = Math.max(...numeric);
  return low === high ? show(low) : `${show(low)} – ${show(high)}`;
}

/**
 * `json_ld.offers.price`: the cost as formatted without a currency symbol (`5 – 25`), where a cost that reads `Free`
 * alone becomes `0`, as the plugin writes it for search engines. Empty when the event has no cost.
 */
export function jsonLdPrice(costs: string[]): string {
  const bare = formatCost(costs, null);
  return /^\s*free\s*$/i.test(bare) ? '0' : bare;
}
