/**
 * Team schema, version 2 (H5: any machine could break the team). Version 1 let every
 * publisher UPDATE `team_state` (`SET revision = 0` blanked team search and broke every
 * later publish; `SET revision = 9223372036854775807` made every publish fail), INSERT a
 * `machines` row for an unused name or a case variant of a real one and publish forged
 * sessions under it, and INSERT `batches` rows of its own making. From version 2:
 *  - the shared state changes only through `intendant.commit_batch(machine, machine_rev)`,
 *    SECURITY DEFINER, which checks that the LOGIN role calling it (session_user: inside
 *    the function current_user is its owner) is the machine's role — or the team's owner,
 *    who may publish as any machine in a one-role setup — and that `machine_rev` is that
 *    machine's current revision (the value its own compare-and-set just bumped in this
 *    transaction); it bumps the team revision by one and writes the batch row. Nothing
 *    else may write team_state or insert batches;
 *  - machine rows are created only by the team's owner (`team add-machine`, or a one-role
 *    setup): publishers may no longer INSERT machines, and may UPDATE only the bookkeeping
 *    columns of their own row — never `name`, `role_name` or `created_at`;
 *  - the publisher group's privileges are exactly PUBLISHER_GRANTS_SQL (below), which
 *    revokes what version 1 granted before it grants.
 * Applied by `team init` in one transaction like every migration (migrate.ts).
 */

/** The team's owner: the schema's owner, or a superuser. */
const OWNER_CHECK = `(
  (SELECT nspowner FROM pg_catalog.pg_namespace WHERE nspname = 'intendant')
    = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = r)
  OR COALESCE((SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = r), false))`;

/** Migration 2 (see the header). */
export const SCHEMA_V2_SQL = `
CREATE FUNCTION intendant.is_team_owner(r name) RETURNS boolean
  LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT ${OWNER_CHECK} $$;

CREATE FUNCTION intendant.commit_batch(m text, mrev bigint) RETURNS bigint
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
DECLARE
  rev bigint;
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM intendant.machines
    WHERE name = m AND revision = mrev
      AND (role_name = session_user OR intendant.is_team_owner(session_user))
  ) THEN
    RAISE EXCEPTION 'role % may not commit a batch of machine % at revision %',
      session_user, m, mrev USING ERRCODE = '42501';
  END IF;
  UPDATE intendant.team_state SET revision = revision + 1 RETURNING revision INTO rev;
  INSERT INTO intendant.batches (team_rev, machine, machine_rev) VALUES (rev, m, mrev);
  RETURN rev;
END $$;
REVOKE ALL ON FUNCTION intendant.commit_batch(text, bigint) FROM PUBLIC;

DROP POLICY own_insert ON intendant.machines;
DROP POLICY own_insert ON intendant.batches;
`;

/**
 * Privileges of the publisher group role — exactly these, as of schema version 2
 * (this file): what version 1 granted beyond them is revoked first, so re-running it on
 * an older database leaves the same set. Not part of the versioned migration: creating a
 * role needs CREATEROLE, which a database owner may lack; `team init` runs this when it
 * can (migrate.ts) and says so when it cannot.
 */
export const PUBLISHER_GRANTS_SQL = `
REVOKE INSERT, UPDATE ON intendant.machines FROM intendant_publisher;
REVOKE UPDATE ON intendant.team_state FROM intendant_publisher;
REVOKE INSERT ON intendant.batches FROM intendant_publisher;
GRANT USAGE ON SCHEMA intendant TO intendant_publisher;
GRANT SELECT ON ALL TABLES IN SCHEMA intendant TO intendant_publisher;
GRANT UPDATE (publish_seq, revision, local_revision, last_publish_at, last_publish_rev,
  destructive_rev, pruned_rev, sessions, records, newest_ts_ms, binary_version)
  ON intendant.machines TO intendant_publisher;
GRANT INSERT, UPDATE, DELETE ON intendant.sessions, intendant.records, intendant.tombstones
  TO intendant_publisher;
GRANT DELETE ON intendant.batches TO intendant_publisher;
GRANT EXECUTE ON FUNCTION intendant.owns_machine(text) TO intendant_publisher;
GRANT EXECUTE ON FUNCTION intendant.clean_pending() TO intendant_publisher;
GRANT EXECUTE ON FUNCTION intendant.commit_batch(text, bigint) TO intendant_publisher;
`;
