/**
 * A link's rules through the API (SPEC §21): read, replaced whole under If-Match, and tried out (the dry run,
 * which records nothing). The rules themselves (shapes, checks, evaluation) are rules/'s; the redirect
 * compiles the stored list when it caches the link.
 */
import type { LinkRow } from '../../db/types.js';
import { AppError, validationError } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { assertIfMatch } from '../../lib/etag.js';
import { parseInstant, INSTANT_RULE } from '../../lib/instant.js';
import { UserAgentCache } from '../clicks/index.js';
import { assertMayManage } from './link-access.js';
import type { LinkInput } from './link-input.js';
import type { FindLiveLink } from './link-reads.js';
import { linkEtag } from './link-writes.js';
import { namesOf, type LinksRepository } from './links.repository.js';
import type { VisitCache } from './visit-cache.js';
import {
  acceptedLanguages,
  chooseVariant,
  compileRules,
  RuleProbe,
  rulesOf,
  traceRules,
  type Rule,
  type RuleInput,
  type RuleTrace,
} from './rules/index.js';

/** The dry run's question (v1 names): a made-up visit. */
export interface RuleEvaluationInput {
  user_agent?: string;
  ip?: string;
  country?: string;
  accept_language?: string;
  query?: Record<string, string | string[]>;
  referrer?: string;
  at?: string;
}

export interface RuleEvaluation {
  rule_id: string | null;
  variant_id: string | null;
  url: string;
  trace: RuleTrace[];
}

/** GET and PUT /links/{code}/rules answer the list and the link's ETag (its version: any change of the link moves it). */
export interface LinkRules {
  rules: Rule[];
  etag: string;
}

const queryString = (query: Record<string, string | string[]> | undefined): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
};

/**
 * The dry run: which rule and variant a visit like this would get, and why (every rule, every condition). A
 * split's variant is drawn as a first visit's would be (a bot's user agent, or none: the first variant).
 */
function dryRun(
  row: Pick<LinkRow, 'rules' | 'original_url'>,
  body: RuleEvaluationInput,
  now: number,
  agents: UserAgentCache,
): RuleEvaluation {
  let at = now;
  if (body.at !== undefined) {
    const parsed = parseInstant(body.at);
    if (parsed === null) throw validationError([{ field: 'at', message: INSTANT_RULE }], 'Request body is invalid');
    at = parsed;
  }
  const compiled = compileRules(row.rules);
  if (compiled === null) return { rule_id: null, variant_id: null, url: row.original_url, trace: [] };
  const agent = agents.describe(body.user_agent ? body.user_agent : null);
  const probe = new RuleProbe(
    {
      agent,
      userAgent: body.user_agent,
      languages: acceptedLanguages(body.accept_language),
      country: body.country ? body.country.toUpperCase() : null,
      ip: body.ip,
      referrer: body.referrer,
    },
    queryString(body.query),
    at,
  );
  const { winner, trace } = traceRules(compiled, probe);
  if (winner === null) return { rule_id: null, variant_id: null, url: row.original_url, trace };
  const split = winner.target.split;
  if (split === null) return { rule_id: winner.id, variant_id: null, url: winner.target.url!, trace };
  const variant = agent.isBot ? split.variants[0]! : chooseVariant(split, Math.random() * 100);
  return { rule_id: winner.id, variant_id: variant.id, url: variant.url, trace };
}

export function createLinkRulesService(deps: {
  links: Pick<LinksRepository, 'update'>;
  input: Pick<LinkInput, 'rules'>;
  clock: Clock;
  cache: VisitCache;
  findLive: FindLiveLink;
}) {
  const { links, input, clock, cache, findLive } = deps;
  const agents = new UserAgentCache(500);

  /** Owner or admin (or their key with the route's scope), as every management of a link. */
  async function managed(code: string, caller: Caller | null, domain: string | undefined): Promise<LinkRow> {
    const row = await findLive(code, domain, caller);
    assertMayManage(row, caller);
    return row;
  }

  return {
    async getRules(code: string, caller: Caller | null, domain?: string): Promise<LinkRules> {
      const row = await managed(code, caller, domain);
      return { rules: rulesOf(row.rules), etag: linkEtag(row) };
    },

    /** Replaces the list: one new version of the link (If-Match against its ETag, 412 when stale). */
    async putRules(
      code: string,
      body: readonly RuleInput[],
      opts: { caller: Caller | null; ifMatch?: string | undefined; domain?: string | undefined },
    ): Promise<LinkRules> {
      const row = await managed(code, opts.caller, opts.domain);
      assertIfMatch(opts.ifMatch, linkEtag(row));
      const rules = input.rules(row, body);
      const updated = await links.update(row, { rules }, opts.ifMatch === undefined ? null : row.version, clock.now());
      cache.forgetNames(row.domain_id, namesOf(row));
      if (!updated) {
        const now = await findLive(code, opts.domain, opts.caller);
        throw new AppError('PRECONDITION_FAILED', 'If-Match does not match the current representation', [
          { field: 'If-Match', message: `the current ETag is ${linkEtag(now)}` },
        ]);
      }
      return { rules: rulesOf(updated.rules), etag: linkEtag(updated) };
    },

    /** The dry run (see dryRun); records nothing. */
    async evaluate(
      code: string,
      body: RuleEvaluationInput,
      caller: Caller | null,
      domain?: string,
    ): Promise<RuleEvaluation> {
      const row = await managed(code, caller, domain);
      return dryRun(row, body, clock.now(), agents);
    },
  };
}

export type LinkRulesService = ReturnType<typeof createLinkRulesService>;
