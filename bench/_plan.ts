import { openMigrated } from './lib/seed.js';
import { seedMillion } from './lib/million-seed.js';
const dir = '/tmp/million/plan';
const s = await openMigrated(dir);
s.sqlite.prepare("insert into users (username, username_lower, email, email_lower, password_hash, role, status, version, created_at, updated_at) values ('b','b','b@x','b@x','x','user','active',1,0,0)").run();
await s.close();
console.log('seed s', await seedMillion({ databaseUrl: null, dataDir: dir }, 1, 1_000_000, Date.now()));
