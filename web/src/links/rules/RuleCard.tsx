import { fieldMessage, type Problem } from '../../api/problem';
import { Field } from '../../ui/Field';
import { SplitFields } from './SplitFields';
import {
  CONDITION_TYPES,
  newCondition,
  removed,
  replaced,
  type ConditionDraft,
  type ConditionType,
  type QueryMatch,
  type RuleDraft,
} from './rule-drafts';

type Input = { currentTarget: HTMLInputElement | HTMLSelectElement };

/**
 * One rule of the editor: its name, whether it is on, its conditions (all must match; the values of one are
 * alternatives) and where it sends a visitor — one URL or a weighted split whose weights must sum to 100.
 * Each message of the API's answer stands beside the input it is about (`rules.<i>.…`).
 */
export function RuleCard({
  rule,
  index,
  count,
  problem,
  onChange,
  onMove,
  onRemove,
}: {
  rule: RuleDraft;
  index: number;
  count: number;
  problem: Problem | null;
  onChange: (rule: RuleDraft) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const n = index + 1;
  const at = (field: string) => fieldMessage(problem, `rules.${index}.${field}`);
  const set = <K extends keyof RuleDraft>(key: K, value: RuleDraft[K]) => onChange({ ...rule, [key]: value });
  return (
    <fieldset class="rule-card">
      <legend>
        Rule {n}
        {rule.name.trim() ? `: ${rule.name.trim()}` : ''}
      </legend>
      <RuleControls
        n={n}
        index={index}
        count={count}
        enabled={rule.enabled}
        onEnabled={(on) => set('enabled', on)}
        onMove={onMove}
        onRemove={onRemove}
      />
      <Field label={`Rule ${n} name`} hint="Optional" error={at('name')}>
        {(a) => (
          <input {...a} maxLength={100} value={rule.name} onInput={(e: Input) => set('name', e.currentTarget.value)} />
        )}
      </Field>
      {rule.conditions.map((c, j) => (
        <ConditionRow
          key={j}
          label={`Rule ${n} condition ${j + 1}`}
          condition={c}
          error={at(`conditions.${j}`)}
          onChange={(next) => set('conditions', replaced(rule.conditions, j, next))}
          onRemove={rule.conditions.length > 1 ? () => set('conditions', removed(rule.conditions, j)) : null}
        />
      ))}
      {at('conditions') && <p class="field-error">{at('conditions')}</p>}
      <p>
        <button type="button" onClick={() => set('conditions', [...rule.conditions, newCondition()])}>
          Add a condition to rule {n}
        </button>
      </p>
      <TargetFields rule={rule} n={n} at={at} set={set} />
    </fieldset>
  );
}

/** Whether the rule is on, and its place in the list (the first rule that matches wins). */
function RuleControls({
  n,
  index,
  count,
  enabled,
  onEnabled,
  onMove,
  onRemove,
}: {
  n: number;
  index: number;
  count: number;
  enabled: boolean;
  onEnabled: (on: boolean) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  return (
    <p class="row">
      <label>
        <input type="checkbox" checked={enabled} onChange={(e) => onEnabled(e.currentTarget.checked)} /> On
      </label>
      <button type="button" onClick={() => onMove(-1)} disabled={index === 0} aria-label={`Move rule ${n} up`}>
        Up
      </button>
      <button type="button" onClick={() => onMove(1)} disabled={index === count - 1} aria-label={`Move rule ${n} down`}>
        Down
      </button>
      <button type="button" onClick={onRemove} aria-label={`Remove rule ${n}`}>
        Remove
      </button>
    </p>
  );
}

function ConditionRow({
  label,
  condition: c,
  error,
  onChange,
  onRemove,
}: {
  label: string;
  condition: ConditionDraft;
  error: string | undefined;
  onChange: (c: ConditionDraft) => void;
  onRemove: (() => void) | null;
}) {
  const kind = CONDITION_TYPES.find((t) => t.type === c.type)!;
  const takesValues = c.type !== 'query' || c.match === 'equals';
  return (
    <div class="rule-condition">
      <Field label={`${label} type`}>
        {(a) => (
          <select
            {...a}
            value={c.type}
            onChange={(e: Input) => onChange({ ...c, type: e.currentTarget.value as ConditionType })}
          >
            {CONDITION_TYPES.map((t) => (
              <option key={t.type} value={t.type}>
                {t.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {c.type === 'query' && <QueryFields label={label} condition={c} onChange={onChange} />}
      {takesValues && (
        <Field label={`${label} values`} hint={`Separate with commas: ${kind.hint}`} error={error}>
          {(a) => (
            <input {...a} value={c.values} onInput={(e: Input) => onChange({ ...c, values: e.currentTarget.value })} />
          )}
        </Field>
      )}
      {!takesValues && error && <p class="field-error">{error}</p>}
      {onRemove && (
        <button type="button" onClick={onRemove} aria-label={`Remove ${label.toLowerCase()}`}>
          Remove condition
        </button>
      )}
    </div>
  );
}

/** A query condition's parameter and how it matches (equals one of the values, present, absent). */
function QueryFields({
  label,
  condition: c,
  onChange,
}: {
  label: string;
  condition: ConditionDraft;
  onChange: (c: ConditionDraft) => void;
}) {
  return (
    <>
      <Field label={`${label} parameter`}>
        {(a) => <input {...a} value={c.key} onInput={(e: Input) => onChange({ ...c, key: e.currentTarget.value })} />}
      </Field>
      <Field label={`${label} match`}>
        {(a) => (
          <select
            {...a}
            value={c.match}
            onChange={(e: Input) => onChange({ ...c, match: e.currentTarget.value as QueryMatch })}
          >
            <option value="equals">equals one of</option>
            <option value="present">is present</option>
            <option value="absent">is absent</option>
          </select>
        )}
      </Field>
    </>
  );
}

function TargetFields({
  rule,
  n,
  at,
  set,
}: {
  rule: RuleDraft;
  n: number;
  at: (field: string) => string | undefined;
  set: <K extends keyof RuleDraft>(key: K, value: RuleDraft[K]) => void;
}) {
  return (
    <div class="rule-target">
      <p class="row" role="radiogroup" aria-label={`Rule ${n} sends visitors to`}>
        <label>
          <input type="radio" checked={!rule.split} onChange={() => set('split', false)} /> One URL
        </label>
        <label>
          <input type="radio" checked={rule.split} onChange={() => set('split', true)} /> A split (A/B test)
        </label>
      </p>
      {!rule.split ? (
        <Field label={`Rule ${n} URL`} error={at('target.url') ?? at('target')}>
          {(a) => (
            <input {...a} type="url" value={rule.url} onInput={(e: Input) => set('url', e.currentTarget.value)} />
          )}
        </Field>
      ) : (
        <SplitFields rule={rule} n={n} at={at} set={set} />
      )}
    </div>
  );
}
