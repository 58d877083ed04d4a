// Repository paths the cluster integration tests read.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** deploy/sql: the migrations the platform applies at start. */
export const DEPLOY_SQL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'sql');
