/**
 * @module A PostgreSQL introspector that looks only at the current schema. Kysely's own one reads
 * the catalog of every schema and calls name-based functions on each (has_schema_privilege,
 * pg_get_serial_sequence): when another schema of the same database is dropped meanwhile (a
 * parallel test run, another tenant), it fails with "schema … does not exist". The Migrator
 * introspects before every migration, so Gatehouse's migrations would fail for a neighbour's
 * DROP SCHEMA. Gatehouse only ever needs its own schema.
 */
import { sql, type DatabaseIntrospector, type DatabaseMetadata, type DatabaseMetadataOptions, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely';

interface ColumnRow {
  table_name: string;
  table_type: string;
  column_name: string | null;
  data_type: string | null;
  is_nullable: string | null;
  column_default: string | null;
  is_identity: string | null;
}

const KYSELY_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    // information_schema checks privileges by OID, which never fails for a vanished object.
    const { rows } = await sql<ColumnRow>`
      select t.table_schema, t.table_name, t.table_type, c.column_name, c.data_type, c.is_nullable, c.column_default, c.is_identity
      from information_schema.tables t
      left join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
      where t.table_schema = current_schema()
      order by t.table_name, c.ordinal_position`.execute(this.db);
    const { rows: current } = await sql<{ schema: string }>`select current_schema() as schema`.execute(this.db);
    const schema = current[0]?.schema;
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLES.has(row.table_name)) continue;
      let table = tables.get(row.table_name);
      if (table === undefined) {
        table = { name: row.table_name, isView: row.table_type === 'VIEW', columns: [], ...(schema ? { schema } : {}) };
        tables.set(row.table_name, table);
      }
      if (row.column_name === null) continue;
      table.columns.push({
        name: row.column_name,
        dataType: row.data_type ?? '',
        isNullable: row.is_nullable === 'YES',
        hasDefaultValue: row.column_default !== null || row.is_identity === 'YES',
        isAutoIncrementing: row.is_identity === 'YES' || (row.column_default ?? '').startsWith('nextval('),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
