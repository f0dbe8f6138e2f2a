import { Field } from '../../ui/Field';
import { newVariant, removed, replaced, weightSum, type RuleDraft, type VariantDraft } from './rule-drafts';

type Input = { currentTarget: HTMLInputElement };
type Setter = <K extends keyof RuleDraft>(key: K, value: RuleDraft[K]) => void;

/** One variant of a split: its URL and its weight in percent. */
function VariantRow({
  label,
  variant: v,
  error,
  onChange,
  onRemove,
}: {
  label: string;
  variant: VariantDraft;
  error: (field: 'url' | 'weight') => string | undefined;
  onChange: (v: VariantDraft) => void;
  onRemove: (() => void) | null;
}) {
  return (
    <div class="rule-variant">
      <Field label={`${label} URL`} error={error('url')}>
        {(a) => (
          <input
            {...a}
            type="url"
            value={v.url}
            onInput={(e: Input) => onChange({ ...v, url: e.currentTarget.value })}
          />
        )}
      </Field>
      <Field label={`${label} weight`} hint="Percent" error={error('weight')}>
        {(a) => (
          <input
            {...a}
            type="number"
            min={1}
            max={99}
            value={v.weight}
            onInput={(e: Input) => onChange({ ...v, weight: e.currentTarget.value })}
          />
        )}
      </Field>
      {onRemove && (
        <button type="button" onClick={onRemove}>
          Remove {label.toLowerCase()}
        </button>
      )}
    </div>
  );
}

/**
 * A split's variants (2–10) with their weights, what the weights add up to — the editor sends none that does
 * not sum to 100 — and whether a visitor keeps their variant (the ferry_v_<link id> cookie).
 */
export function SplitFields({
  rule,
  n,
  at,
  set,
}: {
  rule: RuleDraft;
  n: number;
  at: (field: string) => string | undefined;
  set: Setter;
}) {
  const sum = weightSum(rule.variants);
  return (
    <>
      {rule.variants.map((v, i) => (
        <VariantRow
          key={i}
          label={`Rule ${n} variant ${i + 1}`}
          variant={v}
          error={(field) => at(`target.split.${i}.${field}`)}
          onChange={(next) => set('variants', replaced(rule.variants, i, next))}
          onRemove={rule.variants.length > 2 ? () => set('variants', removed(rule.variants, i)) : null}
        />
      ))}
      <p class={sum === 100 ? 'muted' : 'field-error'} aria-live="polite">
        {sum === 100 ? 'The weights sum to 100.' : `The weights sum to ${sum}; they must sum to 100.`}
      </p>
      {at('target.split') && <p class="field-error">{at('target.split')}</p>}
      <p class="row">
        {rule.variants.length < 10 && (
          <button type="button" onClick={() => set('variants', [...rule.variants, newVariant()])}>
            Add a variant to rule {n}
          </button>
        )}
        <label>
          <input type="checkbox" checked={rule.sticky} onChange={(e) => set('sticky', e.currentTarget.checked)} /> A
          visitor keeps their variant
        </label>
      </p>
    </>
  );
}
