import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/**
 * The baseline of bench/redirect.ts: the least a Fastify redirect can do. No logging, no hooks, no schema,
 * no click recording; a Map from code to URL. Ferry's redirect is measured against this in the same run.
 */
const links = new Map<string, string>(
  JSON.parse(readFileSync(process.env.CODES_FILE!, 'utf8')) as Array<[string, string]>,
);
const app = Fastify({ logger: false });

app.get('/:code', (request, reply) => {
  const url = links.get((request.params as { code: string }).code);
  if (url === undefined) return reply.code(404).send();
  return reply.code(302).header('location', url).header('cache-control', 'private, no-store').send();
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
