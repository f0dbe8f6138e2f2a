import { fieldMessage, type Problem } from '../api/problem';
import { Field } from '../ui/Field';
import type { LinkValues } from './link-values';
import { DomainPicker } from './DomainPicker';

/** The form fields the API's messages can name (details[].field), beside which they are shown. */
export const LINK_FIELDS = [
  'original_url',
  'short_code',
  'expires_at',
  'max_visits',
  'password',
  'tags',
  'forward_query',
  'title',
  'domain',
  'aliases',
  'fallback_url',
] as const;

interface LinkFieldsProps {
  values: LinkValues;
  onChange: (values: LinkValues) => void;
  problem: Problem | null;
  /** editing: the code cannot change, and a password can be kept, replaced or removed */
  editing?: { hasPassword: boolean };
}

type TextField =
  | 'original_url'
  | 'short_code'
  | 'expires_at'
  | 'max_visits'
  | 'password'
  | 'tags'
  | 'title'
  | 'aliases'
  | 'fallback_url';

/** What each group of fields gets: the values, the change of them all, and the API's message for a field. */
interface GroupProps {
  values: LinkValues;
  onChange: (values: LinkValues) => void;
  err: (field: string) => string | undefined;
  /** an input's onInput that sets its field */
  text: (field: TextField) => (e: { currentTarget: HTMLInputElement }) => void;
}

/**
 * The fields of a link (SPEC §13, §16): the target labelled Destination URL, then code, expiry, max
 * visits, password, tags and forward query, each with its hint and the API's message for it.
 */
export function LinkFields({ values, onChange, problem, editing }: LinkFieldsProps) {
  const group: GroupProps = {
    values,
    onChange,
    err: (field) => fieldMessage(problem, field),
    text: (field) => (e) => onChange({ ...values, [field]: e.currentTarget.value }),
  };
  return (
    <>
      <LinkTargetFields {...group} />
      <LinkNameFields {...group} editing={editing !== undefined} />
      <LinkLimitFields {...group} />
      <PasswordFields {...group} editing={editing} />
      <TagsField {...group} />
      <ForwardQueryField {...group} />
    </>
  );
}

/** Where the link leads, what it is for its owner, and the domain it is on. */
function LinkTargetFields({ values, onChange, err, text }: GroupProps) {
  return (
    <>
      <Field
        label="Destination URL"
        hint="The http or https address the short link leads to"
        error={err('original_url')}
      >
        {(a) => (
          <input
            {...a}
            name="original_url"
            type="url"
            inputMode="url"
            required
            placeholder="https://example.com/page"
            value={values.original_url}
            onInput={text('original_url')}
          />
        )}
      </Field>
      <Field
        label="Title (optional)"
        hint="What the link is, for you: up to 200 characters, found by the search"
        error={err('title')}
      >
        {(a) => (
          <input {...a} name="title" autocomplete="off" maxLength={200} value={values.title} onInput={text('title')} />
        )}
      </Field>
      <Field
        label="Fallback URL (optional)"
        hint="Where visits go while the destination is broken (two failed checks in a row)"
        error={err('fallback_url')}
      >
        {(a) => (
          <input
            {...a}
            name="fallback_url"
            type="url"
            inputMode="url"
            autocomplete="off"
            value={values.fallback_url}
            onInput={text('fallback_url')}
          />
        )}
      </Field>
      <DomainPicker
        value={values.domain}
        onChange={(domain) => onChange({ ...values, domain })}
        error={err('domain')}
      />
    </>
  );
}

/** The link's names: its code (chosen at creation, shown read-only when editing) and its aliases. */
function LinkNameFields({ values, err, text, editing }: GroupProps & { editing: boolean }) {
  return (
    <>
      {editing ? (
        <Field label="Code" hint="A link's code never changes">
          {(a) => <input {...a} name="short_code" readOnly value={values.short_code} />}
        </Field>
      ) : (
        <Field
          label="Custom code (optional)"
          hint="1 to 8 letters or digits; leave empty for a random code"
          error={err('short_code')}
        >
          {(a) => (
            <input
              {...a}
              name="short_code"
              autocomplete="off"
              autocapitalize="off"
              spellcheck={false}
              value={values.short_code}
              onInput={text('short_code')}
            />
          )}
        </Field>
      )}
      <Field
        label="Aliases (optional)"
        hint="Up to 10 further names that lead here too, separated by commas or spaces: letters, digits, - and _ (e.g. summer-sale)"
        error={err('aliases')}
      >
        {(a) => (
          <input
            {...a}
            name="aliases"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            value={values.aliases}
            onInput={text('aliases')}
          />
        )}
      </Field>
    </>
  );
}

/** How long and how often the link redirects: its expiry and its max visits. */
function LinkLimitFields({ values, err, text }: GroupProps) {
  return (
    <>
      <Field
        label="Expires (optional)"
        hint="In your time zone; leave empty to keep the link for good"
        error={err('expires_at')}
      >
        {(a) => (
          <input
            {...a}
            name="expires_at"
            type="datetime-local"
            value={values.expires_at}
            onInput={text('expires_at')}
          />
        )}
      </Field>
      <Field
        label="Max visits (optional)"
        hint="Visits by people that are redirected; later ones are refused. Empty: no limit"
        error={err('max_visits')}
      >
        {(a) => (
          <input
            {...a}
            name="max_visits"
            inputMode="numeric"
            autocomplete="off"
            value={values.max_visits}
            onInput={text('max_visits')}
          />
        )}
      </Field>
    </>
  );
}

/** The password visitors must give: set at creation; when editing kept (left empty), replaced or removed. */
function PasswordFields({ values, onChange, err, text, editing }: GroupProps & Pick<LinkFieldsProps, 'editing'>) {
  return (
    <>
      <Field
        label={editing ? 'New password (optional)' : 'Password (optional)'}
        hint={
          editing?.hasPassword
            ? 'Visitors must give the password; leave empty to keep the current one'
            : 'Visitors must give it to be redirected; 8 to 128 characters'
        }
        error={err('password')}
      >
        {(a) => (
          <input
            {...a}
            name="password"
            type="password"
            autocomplete="new-password"
            value={values.password}
            onInput={text('password')}
          />
        )}
      </Field>
      {editing?.hasPassword && (
        <label class="check">
          <input
            type="checkbox"
            name="remove_password"
            checked={values.removePassword}
            onChange={(e) => onChange({ ...values, removePassword: e.currentTarget.checked })}
          />{' '}
          Remove the password
        </label>
      )}
    </>
  );
}

function TagsField({ values, err, text }: GroupProps) {
  return (
    <Field
      label="Tags (optional)"
      hint="Up to 10, separated by commas: lower-case letters, digits and -"
      error={err('tags')}
    >
      {(a) => (
        <input
          {...a}
          name="tags"
          autocomplete="off"
          autocapitalize="off"
          spellcheck={false}
          value={values.tags}
          onInput={text('tags')}
        />
      )}
    </Field>
  );
}

/** A checkbox, not a Field: its label follows the box, and the API's message for it sits below. */
function ForwardQueryField({ values, onChange, err }: GroupProps) {
  return (
    <div class={err('forward_query') ? 'field field-invalid' : 'field'}>
      <label class="check">
        <input
          type="checkbox"
          name="forward_query"
          checked={values.forward_query}
          onChange={(e) => onChange({ ...values, forward_query: e.currentTarget.checked })}
        />{' '}
        Forward the visit's query string (utm_* parameters pass through)
      </label>
      {err('forward_query') && <p class="field-error">{err('forward_query')}</p>}
    </div>
  );
}
