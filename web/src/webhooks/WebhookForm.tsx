import type { TargetedSubmitEvent } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { WebhookCreated, WebhookEvent } from '../api/client';
import { outcome } from '../api/outcome';
import { fieldMessage, formMessage, type Problem } from '../api/problem';
import { useApi, useUser } from '../session/session';
import { Field } from '../ui/Field';
import { FormError } from '../ui/States';
import { useFocusFirstInvalid } from '../ui/use-focus-first-invalid';
import { EVENT_LABELS, EVENTS } from './webhook-events';

const FIELDS = ['url', 'events', 'description', 'include_bots', 'scope'];

/** The new hook's fields and its POST; the fields are cleared once the hook is created. */
function useWebhookCreation(onCreated: (hook: WebhookCreated) => void) {
  const api = useApi();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>([]);
  const [includeBots, setIncludeBots] = useState(false);
  const [instance, setInstance] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useFocusFirstInvalid(form, problem);
  const toggle = (event: WebhookEvent, on: boolean) =>
    setEvents(on ? EVENTS.filter((e) => e === event || events.includes(e)) : events.filter((e) => e !== event));

  const submit = async (e: TargetedSubmitEvent<HTMLFormElement>) => {
    e.preventDefault();
    setBusy(true);
    const body = {
      url: url.trim(),
      events,
      include_bots: includeBots,
      ...(description.trim() ? { description: description.trim() } : {}),
      ...(instance ? { scope: 'instance' as const } : {}),
    };
    const created = await outcome(api.POST('/api/v1/webhooks', { body }));
    setBusy(false);
    if (!created.ok) return setProblem(created.problem);
    setProblem(null);
    setUrl('');
    setDescription('');
    setEvents([]);
    setIncludeBots(false);
    setInstance(false);
    onCreated(created.data);
  };
  const state = { url, description, events, includeBots, instance };
  const set = { setUrl, setDescription, toggle, setIncludeBots, setInstance };
  return { state, set, problem, busy, form, submit };
}

/** A refused address (WEBHOOK_TARGET_FORBIDDEN: it resolves inside the network) is about the URL field. */
const urlMessage = (problem: Problem | null): string | undefined =>
  problem?.code === 'WEBHOOK_TARGET_FORBIDDEN' ? problem.message : fieldMessage(problem, 'url');

/** The event types, one checkbox each, with the API's message for them. */
function EventsField(props: {
  events: WebhookEvent[];
  toggle: (event: WebhookEvent, on: boolean) => void;
  error: string | undefined;
}) {
  const { events, toggle, error } = props;
  return (
    <fieldset class={error ? 'scopes field-invalid' : 'scopes'} aria-describedby={error ? 'events-error' : undefined}>
      <legend>Events</legend>
      {EVENTS.map((event) => (
        <label class="check" key={event}>
          <input
            type="checkbox"
            name="events"
            value={event}
            checked={events.includes(event)}
            aria-invalid={Boolean(error)}
            onChange={(e) => toggle(event, e.currentTarget.checked)}
          />
          <span>
            <code>{event}</code> {EVENT_LABELS[event]}
          </span>
        </label>
      ))}
      {error && (
        <p class="field-error" id="events-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** Bots' clicks too; and, offered to admins only (`setInstance` null for others), the whole instance's events. */
function HookOptions(props: {
  includeBots: boolean;
  setIncludeBots: (on: boolean) => void;
  instance: boolean;
  setInstance: ((on: boolean) => void) | null;
}) {
  const { setInstance } = props;
  return (
    <>
      <label class="check">
        <input
          type="checkbox"
          name="include_bots"
          checked={props.includeBots}
          onChange={(e) => props.setIncludeBots(e.currentTarget.checked)}
        />
        <span>Include bots' clicks (link.clicked)</span>
      </label>
      {setInstance && (
        <label class="check">
          <input
            type="checkbox"
            name="scope"
            checked={props.instance}
            onChange={(e) => setInstance(e.currentTarget.checked)}
          />
          <span>Instance-wide: every user's links and domains, not only yours</span>
        </label>
      )}
    </>
  );
}

/** Create a webhook (POST /webhooks): where to, which events, bots' clicks too, and for an admin the whole instance. */
export function WebhookForm({ onCreated }: { onCreated: (hook: WebhookCreated) => void }) {
  const user = useUser();
  const { state, set, problem, busy, form, submit } = useWebhookCreation(onCreated);
  const refused = problem?.code === 'WEBHOOK_TARGET_FORBIDDEN' ? null : problem;
  return (
    <form ref={form} onSubmit={submit} noValidate class="link-form" aria-labelledby="new-hook-title">
      <h2 id="new-hook-title">Create a webhook</h2>
      <FormError message={formMessage(refused, FIELDS)} />
      <Field label="Receiver URL" hint="http:// or https://; Ferry POSTs each event there" error={urlMessage(problem)}>
        {(a) => (
          <input
            {...a}
            name="url"
            type="url"
            autocomplete="off"
            required
            value={state.url}
            onInput={(e) => set.setUrl(e.currentTarget.value)}
          />
        )}
      </Field>
      <Field label="Description (optional)" error={fieldMessage(problem, 'description')}>
        {(a) => (
          <input
            {...a}
            name="description"
            autocomplete="off"
            value={state.description}
            onInput={(e) => set.setDescription(e.currentTarget.value)}
          />
        )}
      </Field>
      <EventsField events={state.events} toggle={set.toggle} error={fieldMessage(problem, 'events')} />
      <HookOptions
        includeBots={state.includeBots}
        setIncludeBots={set.setIncludeBots}
        instance={state.instance}
        setInstance={user.role === 'admin' ? set.setInstance : null}
      />
      <button type="submit" disabled={busy}>
        Create webhook
      </button>
    </form>
  );
}
