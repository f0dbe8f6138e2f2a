import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { OutboundError, type OutboundHttp } from '../../infra/outbound-http.js';
import type { Clock } from '../../lib/clock.js';
import type { AttemptResult, ClaimedAttempt } from './webhook-attempts.js';
import { signatureHeader, type SecretBox } from './webhook-secret.js';
import { retryAfterMs } from './webhook-schedule.js';

/** SPEC §22: 15 s for the whole exchange; the first 1,024 bytes of the answer kept. */
export const DELIVERY_DEADLINE_MS = 15_000;
export const RESPONSE_BODY_BYTES = 1_024;

/** Text a column takes: NUL (which PostgreSQL's text refuses) and the other controls but tab and newlines dropped. */
function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code >= 0x20 ? code !== 0x7f : code === 0x09 || code === 0x0a || code === 0x0d) out += ch;
  }
  return out;
}

/** What sending an attempt needs (the dispatcher's deps have it all). */
export interface SendDeps {
  outbound: OutboundHttp;
  secrets: SecretBox;
  clock: Clock;
  log: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  userAgent: string;
}

/** One attempt: the event POSTed, signed, to the hook's URL; what came of it (a cancel by shutdown throws). */
export async function sendAttempt(
  deps: SendDeps,
  claimed: ClaimedAttempt,
  signal: AbortSignal,
): Promise<AttemptResult> {
  const { delivery } = claimed;
  const attemptedAt = deps.clock.now();
  const timestamp = Math.floor(attemptedAt / 1000);
  const started = performance.now();
  const secrets = claimed.secrets.map((s) => deps.secrets.open(s));
  const headers = {
    'content-type': 'application/json',
    'user-agent': deps.userAgent,
    'webhook-id': delivery.event_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, delivery.event_id, timestamp, delivery.payload),
  };
  const took = () => Math.round(performance.now() - started);
  try {
    const res = await deps.outbound.request({
      url: claimed.url,
      method: 'POST',
      headers,
      body: delivery.payload,
      maxRedirects: 0,
      deadlineMs: DELIVERY_DEADLINE_MS,
      maxBodyBytes: RESPONSE_BODY_BYTES,
      onTooLarge: 'truncate',
      allowPrivate: deps.allowPrivate,
      signal,
    });
    const ok = res.status >= 200 && res.status < 300;
    return {
      attemptedAt,
      statusCode: res.status,
      durationMs: took(),
      error: ok ? null : `The receiver answered ${res.status}`,
      responseBody: printable(res.body.toString('utf8')),
      retryAfterMs: ok ? null : retryAfterMs(res.headers['retry-after'], attemptedAt),
    };
  } catch (err) {
    if (!(err instanceof OutboundError) || err.failure === 'cancelled') throw err;
    deps.log.info({ webhookId: delivery.webhook_id, detail: err.detail }, 'webhook delivery failed');
    const error =
      err.failure === 'address-not-allowed'
        ? 'WEBHOOK_TARGET_FORBIDDEN: the host resolves to an address that is not allowed'
        : `No delivery: ${err.message}`;
    return { attemptedAt, statusCode: null, durationMs: took(), error, responseBody: null, retryAfterMs: null };
  }
}
