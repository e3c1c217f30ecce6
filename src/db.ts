import { Command } from 'commander';
import { BackupError, backupDatabase, integrityProblems, restoreDatabase } from './ops/sqlite-backup.ts';
import { loadSettings, type Settings, SettingsError } from './settings.ts';

/**
 * `node src/db.ts` (`npm run db -- ...`): backups of the embedded store. The database is the one the service's
 * settings name (`svc.datastore.sqlite.path`, from the environment or the settings file), or `--database`.
 * Exit codes: 0 done, 1 failed (the message says why).
 */

interface DatabaseOption {
  database?: string;
}

function databasePath(options: DatabaseOption): string {
  if (options.database !== undefined) return options.database;
  const settings: Settings = loadSettings();
  if (settings['svc.datastore.type'] !== 'sqlite') {
    throw new BackupError(
      'the store is PostgreSQL: back it up with pg_dump and restore it with pg_restore (see the README, "Backups")',
    );
  }
  return settings['svc.datastore.sqlite.path'];
}

const program = new Command('db')
  .description('Backups of the embedded (SQLite) store')
  .showHelpAfterError()
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 1));

program
  .command('backup')
  .description('copy the database to a new file, consistently, while the service runs')
  .argument('<file>', 'the backup file to create (must not exist)')
  .option('--database <path>', 'the database (default: svc.datastore.sqlite.path of the settings)')
  .action(async (file: string, options: DatabaseOption) => {
    const source = databasePath(options);
    const pages = await backupDatabase(source, file);
    console.log(`backed up ${source} to ${file} (${pages} pages, integrity ok)`);
  });

program
  .command('restore')
  .description('make a backup the database (stop the service first)')
  .argument('<file>', 'the backup file')
  .option('--database <path>', 'the database (default: svc.datastore.sqlite.path of the settings)')
  .option('--replace', 'overwrite an existing database')
  .action(async (file: string, options: DatabaseOption & { replace?: boolean }) => {
    const target = databasePath(options);
    const pages = await restoreDatabase(file, target, { replace: options.replace === true });
    console.log(`restored ${file} to ${target} (${pages} pages)`);
  });

program
  .command('check')
  .description('run PRAGMA integrity_check on a database or backup file')
  .argument('[file]', 'the file (default: the database)')
  .option('--database <path>', 'the database (default: svc.datastore.sqlite.path of the settings)')
  .action((file: string | undefined, options: DatabaseOption) => {
    const path = file ?? databasePath(options);
    const problems = integrityProblems(path);
    if (problems.length > 0) throw new BackupError(`${path} fails its integrity check: ${problems.join('; ')}`);
    console.log(`${path}: integrity ok`);
  });

try {
  await program.parseAsync();
} catch (error) {
  if (!(error instanceof BackupError || error instanceof SettingsError)) throw error;
  console.error(`db: ${error.message}`);
  process.exit(1);
}
