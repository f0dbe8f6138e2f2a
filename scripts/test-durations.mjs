#!/usr/bin/env node
// Writes test/durations.json, each test file's duration in milliseconds, from a Vitest JSON report: by default the
// Node 20 run's that .ci/run keeps (test-results/vitest-node20.json). test/helpers/sequencer.ts starts the longest
// files first on a clean clone, which has no durations of its own. Refresh it when the suite's long files change:
// `CI=true bash .ci/run` (or any full run), then `node scripts/test-durations.mjs [report.json]`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const root = path.resolve(import.meta.dirname, '..');
const reportFile = path.resolve(process.argv[2] ?? path.join(root, 'test-results/vitest-node20.json'));
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
// The report names files by absolute path in the checkout that ran it (a CI clone, say): test-results/'s parent.
const ranIn = path.resolve(path.dirname(reportFile), '..');
const durations = Object.fromEntries(
  report.testResults
    .map((file) => [
      path.relative(ranIn, file.name).split(path.sep).join('/'),
      Math.round(file.endTime - file.startTime),
    ])
    .sort((a, b) => b[1] - a[1]),
);
writeFileSync(path.join(root, 'test/durations.json'), `${JSON.stringify(durations, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(durations).length} files\n`);
