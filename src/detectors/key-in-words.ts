/**
 * A details key as a reader's label: `retrying_grace` → "Retrying grace". The label of a fact that
 * needs no words of its own, whether a check names it (`factsFrom`) or the service does (attention).
 */
export function keyInWords(key: string): string {
  const words = key.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
