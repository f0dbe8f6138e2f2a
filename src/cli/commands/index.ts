import type { CommandModule } from '../command.js';
import { adminCommand } from './admin.js';
import { backupCommands } from './backup.js';
import { importCommand } from './import.js';
import { keysCommand } from './keys.js';
import { linksCommand } from './links.js';
import { migrateCommand } from './migrate.js';
import { usersCommand } from './users.js';

/**
 * Every command of `ferry`, each a module that adds itself to the program (command.ts, CommandModule). A new
 * command is a file beside this one and one entry here.
 */
export const commandModules: readonly CommandModule[] = [
  adminCommand,
  usersCommand,
  keysCommand,
  linksCommand,
  migrateCommand,
  backupCommands,
  importCommand,
];
