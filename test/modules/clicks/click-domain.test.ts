import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../../src/modules/clicks/event/click-event.js';
import { ClickBatch, eventsOfMessage } from '../../../src/modules/clicks/rollups/click-batch.js';
import {
  clickOfFields,
  decodeClickJson,
  encodeClick,
  encodeClickAs,
} from '../../../src/modules/clicks/transport/click-stream.js';

const base: ClickEvent = {
  linkId: 7,
  shortCode: 'abc',
  clickedAt: 1_700_000_000_000,
  ip: '192.0.2.1',
  userAgent: 'UA/1',
  referrer: null,
  country: null,
  visitor: null,
};

/** The click record keeps the domain (SPEC §19): every hop a click takes to its writer carries it. */
describe("a click's domain on its way to the writer", () => {
  it('when a click on a domain goes through the Redis stream or the journal, then it comes back with its domain', () => {
    const click = { ...base, key: 'k1', domain: 'go.example.test' };
    expect(decodeClickJson(encodeClick(click))).toEqual(click);
    expect(clickOfFields(JSON.parse(encodeClickAs('12', click)))).toEqual({ ...click, key: '12' });
    const throughAlias = { ...click, alias: 'summer-sale' };
    expect(decodeClickJson(encodeClick(throughAlias))).toEqual(throughAlias);
    const aliasOnly = { ...base, key: 'k3', alias: 'summer-sale' };
    expect(decodeClickJson(encodeClick(aliasOnly))).toEqual(aliasOnly);
  });

  it('when a click is on the default domain, then its entry keeps the earlier 9 items and decodes without a domain', () => {
    const text = encodeClick({ ...base, key: 'k2' });
    expect(JSON.parse(text)).toHaveLength(9);
    expect(decodeClickJson(text)).not.toHaveProperty('domain');
  });

  it('when clicks cross to the writer thread in a batch, then each keeps its domain or none', () => {
    const batch = ClickBatch.of([{ ...base, domain: 'go.example.test' }, base]);
    const [onDomain, onDefault] = eventsOfMessage(batch.toMessage(), [0, 1]);
    expect(onDomain!.domain).toBe('go.example.test');
    expect(onDefault).not.toHaveProperty('domain');
  });
});
