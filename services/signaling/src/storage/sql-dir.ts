import { fileURLToPath } from 'node:url';

/** deploy/sql at the repository root: V001__devices.sql (this service) and the cluster's tables. */
export const SQL_DIR = fileURLToPath(new URL('../../../../deploy/sql', import.meta.url));
