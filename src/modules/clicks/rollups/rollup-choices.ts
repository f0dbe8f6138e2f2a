import type { ChoiceKind } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';

/** The rollup plan's choices (rollup-plan.ts): what routed a link's human clicks (SPEC §21). */

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Human clicks of a link on a UTC day that a routing rule or an A/B variant chose (SPEC §21), per visitor (the
 * address, or with IP_ANONYMIZE the daily hash; '' when the click has none): by_rule and by_variant.
 */
export interface ChoiceIncrement {
  linkId: number;
  dayStart: number;
  kind: ChoiceKind;
  /** the rule's or the variant's id */
  value: string;
  visitor: string;
  clicks: number;
}

/** A human click's rule and variant (those it has) in the plan's choices, keyed as their rows. */
export function addChoices(
  choices: Map<string, ChoiceIncrement>,
  e: Pick<ClickEvent, 'linkId' | 'ruleId' | 'variantId'>,
  dayStart: number,
  visitor: string,
): void {
  const add = (kind: ChoiceKind, value: string): void => {
    const key = `${e.linkId}\u0000${dayStart}\u0000${kind}\u0000${value}\u0000${visitor}`;
    const c = choices.get(key);
    if (c === undefined) choices.set(key, { linkId: e.linkId, dayStart, kind, value, visitor, clicks: 1 });
    else c.clicks += 1;
  };
  if (e.ruleId != null) add('rule', e.ruleId);
  if (e.variantId != null) add('variant', e.variantId);
}

export const byChoiceKey = (a: ChoiceIncrement, b: ChoiceIncrement): number =>
  a.linkId - b.linkId ||
  a.dayStart - b.dayStart ||
  byString(a.kind, b.kind) ||
  byString(a.value, b.value) ||
  byString(a.visitor, b.visitor);
