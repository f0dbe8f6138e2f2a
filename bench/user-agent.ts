/**
 * The cost of describing a visit's User-Agent (SPEC §15), per click: isbot alone, ua-parser-js uncached, and
 * through the writer's LRU cache (src/modules/clicks/event/user-agent.ts) on traffic that repeats a few hundred
 * agents. Prints µs per user agent and the ratios against isbot alone, measured in the same run.
 *
 *   npx tsx bench/user-agent.ts
 */
import { isbot } from 'isbot';
import { describeUserAgentUncached, UserAgentCache } from '../src/modules/clicks/event/user-agent.js';

const browsers = ['Chrome', 'Firefox', 'Edg', 'OPR', 'SamsungBrowser'];
const platforms = [
  'Windows NT 10.0; Win64; x64',
  'Macintosh; Intel Mac OS X 10_15_7',
  'X11; Linux x86_64',
  'Linux; Android 14; Pixel 8',
  'iPhone; CPU iPhone OS 17_5 like Mac OS X',
  'iPad; CPU OS 17_5 like Mac OS X',
];
const distinct: string[] = [];
for (let v = 100; v < 132; v += 1) {
  for (const p of platforms)
    for (const b of browsers)
      distinct.push(`Mozilla/5.0 (${p}) AppleWebKit/537.36 (KHTML, like Gecko) ${b}/${v}.0.0.0 Safari/537.36`);
}
distinct.push(
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'curl/8.5.0',
);
// Zipf-like traffic over the distinct agents: a few are most of the visits.
const traffic = Array.from(
  { length: 200_000 },
  (_, i) => distinct[Math.floor(distinct.length * Math.pow(((i * 7919) % 10_007) / 10_007, 3))]!,
);

function perCall(label: string, fn: (ua: string) => unknown, items: readonly string[]): number {
  for (let i = 0; i < Math.min(items.length, 20_000); i += 1) fn(items[i]!); // warm up
  const started = process.hrtime.bigint();
  let sink = 0;
  for (const ua of items) if (fn(ua)) sink += 1;
  const us = Number(process.hrtime.bigint() - started) / 1000 / items.length;
  process.stdout.write(
    `${label.padEnd(44)} ${us.toFixed(3).padStart(8)} µs per user agent (${sink > -1 ? items.length.toLocaleString('en-US') : ''} calls)\n`,
  );
  return us;
}

process.stdout.write(`${distinct.length} distinct user agents, ${traffic.length.toLocaleString('en-US')} visits\n`);
const base = perCall('isbot only (the redirect already pays this)', (ua) => isbot(ua), traffic);
const uncached = perCall(
  'isbot + ua-parser-js, every visit',
  (ua) => describeUserAgentUncached(ua),
  traffic.slice(0, 40_000),
);
const cache = new UserAgentCache();
const cached = perCall('isbot + ua-parser-js through the LRU cache', (ua) => cache.describe(ua), traffic);
process.stdout.write(
  `ratio uncached / isbot: ${(uncached / base).toFixed(1)}x; cached / isbot: ${(cached / base).toFixed(2)}x; uncached / cached: ${(uncached / cached).toFixed(0)}x\n`,
);
