import type { TestProject } from 'vitest/node';
import { startCluster } from '../../scripts/postgresCluster.js';
import { PostgresEngine } from '../../src/db/postgres/engine.js';
import { TEMPLATE_DATABASE } from '../helpers/engines.js';

/**
 * vitest globalSetup of the postgres project: a throwaway PostgreSQL cluster in a temporary folder on a free port
 * (as the `postgres` account when the tests run as root), and a migrated template database every test server
 * copies (`CREATE DATABASE … TEMPLATE`, far faster than migrating each). Removed when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const cluster = await startCluster();
  const admin = new (await import('pg')).default.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  const engine = await PostgresEngine.open(cluster.urlOf(TEMPLATE_DATABASE), { pool: 2 });
  await engine.close();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
