/**
 * Team schema, version 1: the tables every machine publishes into and every team search
 * reads (issue 19). Everything lives in one PostgreSQL schema, `intendant`, so one
 * database can hold several teams by giving each its own database (the issue measured a
 * per-team READ policy turning a 0.2 ms index lookup into a 163 ms seqscan — `LIKE` is
 * not leakproof — so teams are isolated by database, never by read policy).
 *
 * Tables:
 *  - schema_version  one row per applied migration (version, applied_at, by whom);
 *  - team_state      one row: the team `revision`, bumped by every publish batch at its
 *                    very END (after its rows are written, just before COMMIT). The row
 *                    lock serializes only those last statements and the commit, so revision
 *                    T committed implies every revision ≤ T committed — the cursor
 *                    invariant — while the machines' heavy inserts (GIN maintenance) run
 *                    concurrently (measured: bench/RESULTS.md);
 *  - machines        one row per machine: the database role allowed to write its rows,
 *                    `publish_seq` (the watermark compare-and-set: every batch bumps it
 *                    only if it still has the value its writer read, so a stale writer is
 *                    refused), `revision` (the machine's own batch counter, bumped by the
 *                    same CAS statement: rows carry it as rev_added, known before any row
 *                    is written), the local manifest revision last published, counters for
 *                    `team status`, and `destructive_rev`: the TEAM revision of the last
 *                    change that can move an already-served row (a supersession flip, a
 *                    deleted or rewritten record, a tombstone, retention). A cursor pinned
 *                    before it answers 410;
 *  - batches         (team revision, machine, machine revision) of every batch: "as of team
 *                    revision T" means, per machine, rows with rev_added ≤ the highest
 *                    machine revision of a batch at or before T (team_search.ts). A
 *                    publisher prunes its machine's rows older than a day but the newest
 *                    of them and records that row's team revision as machines.pruned_rev:
 *                    a cursor older than it answers 410 (publish_batch.ts);
 *  - sessions        one row per (machine, session_key) with the display facts, `sig` (the
 *                    local generations list it was published from: a changed sig is the
 *                    publisher's cue to diff the session), the supersession marks (for the
 *                    remote detail view) and newest_ts_ms (the newest-first plan's order);
 *  - records         one row per MessageRecord: the ORIGINAL text and the app-FOLDED text
 *                    (lib/message_search fold: per-character lowercase + NFD), `superseded`
 *                    materialized by the owning machine, the flags, the encoded locator and
 *                    `rev_added` (its machine's revision). No foreign key to sessions: the
 *                    publisher deletes a session's records itself in the same transaction,
 *                    and a per-row RI check cost ~20 µs a row of a publish (measured). The GIN trigram index is on `folded` (plain LIKE over the
 *                    folded column gives exactly the app's matches; ILIKE on raw text misses
 *                    NFD spellings). `has_marks` says the folded text contains a combining
 *                    mark or medial jamo, the only rows where the app's boundary rule
 *                    (query/match.ts) can reject a LIKE match, so only those rows pay for the
 *                    regex recheck;
 *  - tombstones      sessions deleted on their machine (kept so `team status` and a remote
 *                    reader can say why a session went away);
 *  - settings        key/value: `retention_days` (server-side retention, null = keep all).
 *
 * U+0000: PostgreSQL text cannot hold it. The replica stores U+FFFD in its place and the
 * UTF-16 offsets of the replaced units in `nul_at`, so the original text is restored
 * exactly before highlighting (byte-exact ranges); the local store keeps the original.
 * Folded text is stored with U+FFFD too: no needle contains U+0000 (parse_query drops it),
 * and U+FFFD is not a combining mark, so no match changes.
 *
 * Row-level security is on for writes only: a machine's role may INSERT/UPDATE/DELETE only
 * rows of machines whose `role_name` is that role (WITH CHECK on inserts and updates,
 * USING on updates and deletes); every role may SELECT everything (`USING (true)` —
 * constant, so it never blocks an index). The schema owner (the role that ran `team
 * init`) is not subject to RLS (not FORCEd): a one-role setup publishes as any machine.
 */

/** The PostgreSQL schema holding the team tables. */
export const TEAM_SCHEMA = "intendant";

/** The role every machine role is made a member of (privileges on the tables). */
export const PUBLISHER_GROUP_ROLE = "intendant_publisher";

/** Migration 1: creates everything above. Runs inside one transaction. */
export const SCHEMA_V1_SQL = `
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE SCHEMA IF NOT EXISTS intendant;

CREATE TABLE intendant.team_state (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  revision bigint NOT NULL DEFAULT 0
);
INSERT INTO intendant.team_state (id, revision) VALUES (true, 0);

CREATE TABLE intendant.machines (
  name text COLLATE "C" PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
  role_name text NOT NULL DEFAULT current_user,
  created_at timestamptz NOT NULL DEFAULT now(),
  publish_seq bigint NOT NULL DEFAULT 0,
  revision bigint NOT NULL DEFAULT 0,
  local_revision bigint,
  last_publish_at timestamptz,
  last_publish_rev bigint,
  destructive_rev bigint NOT NULL DEFAULT 0,
  pruned_rev bigint NOT NULL DEFAULT 0,
  sessions bigint NOT NULL DEFAULT 0,
  records bigint NOT NULL DEFAULT 0,
  newest_ts_ms bigint,
  binary_version text
);

CREATE TABLE intendant.sessions (
  machine text COLLATE "C" NOT NULL REFERENCES intendant.machines (name),
  session_key text COLLATE "C" NOT NULL,
  source text NOT NULL,
  session_id text NOT NULL,
  title text,
  project text,
  project_folded text,
  parent_session_id text,
  newest_ts_ms bigint NOT NULL,
  oldest_ts_ms bigint NOT NULL,
  records integer NOT NULL,
  source_gone boolean NOT NULL DEFAULT false,
  sig text NOT NULL,
  marks jsonb NOT NULL DEFAULT '[]',
  rev_added bigint NOT NULL,
  rev_changed bigint NOT NULL,
  PRIMARY KEY (machine, session_key)
);
CREATE INDEX sessions_newest ON intendant.sessions (newest_ts_ms DESC, machine, session_key);

CREATE TABLE intendant.records (
  machine text COLLATE "C" NOT NULL,
  session_key text COLLATE "C" NOT NULL,
  record_id text COLLATE "C" NOT NULL,
  ord integer NOT NULL,
  source text NOT NULL,
  role smallint NOT NULL CHECK (role IN (1, 2)),
  ts_ms bigint NOT NULL,
  seq integer,
  truncated boolean NOT NULL,
  subagent boolean NOT NULL,
  superseded boolean NOT NULL,
  has_marks boolean NOT NULL,
  text text NOT NULL,
  nul_at integer[],
  folded text NOT NULL,
  locator text NOT NULL,
  rev_added bigint NOT NULL,
  PRIMARY KEY (machine, session_key, record_id)
);
CREATE INDEX records_folded_trgm ON intendant.records USING gin (folded gin_trgm_ops);
-- A session's records newest first: the newest-first plan's hits stop at the third match.
CREATE INDEX records_session_ts ON intendant.records (machine, session_key, ts_ms DESC, ord DESC);

CREATE TABLE intendant.batches (
  team_rev bigint NOT NULL,
  machine text COLLATE "C" NOT NULL,
  machine_rev bigint NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_rev, machine)
);
CREATE INDEX batches_machine ON intendant.batches (machine, team_rev);

CREATE TABLE intendant.tombstones (
  machine text NOT NULL REFERENCES intendant.machines (name),
  session_key text NOT NULL,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  rev bigint NOT NULL,
  PRIMARY KEY (machine, session_key)
);

CREATE TABLE intendant.settings (
  key text PRIMARY KEY,
  value text
);
INSERT INTO intendant.settings (key, value) VALUES ('retention_days', NULL);

-- Moves the trigram index's pending list into the index proper AND returns its pages to the
-- free space map (gin_clean_pending_list). Publishers call it after each batch: an inserting
-- backend that cleans the list itself does not recycle the pages until a VACUUM, and ten
-- machines publishing at once grew the index 3.4× (936 MB against 274 MB, bench corpus).
-- SECURITY DEFINER: the function needs the index's owner; callers only get this call.
CREATE FUNCTION intendant.clean_pending() RETURNS bigint
  LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$ SELECT gin_clean_pending_list('intendant.records_folded_trgm'::regclass) $$;
REVOKE ALL ON FUNCTION intendant.clean_pending() FROM PUBLIC;

-- A machine's role owns the machines it is named on. SECURITY DEFINER is not needed: every
-- role may read machines.
CREATE FUNCTION intendant.owns_machine(m text) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$ SELECT EXISTS (SELECT 1 FROM intendant.machines
                       WHERE name = m AND role_name = current_user) $$;

ALTER TABLE intendant.machines ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON intendant.machines FOR SELECT USING (true);
CREATE POLICY own_insert ON intendant.machines FOR INSERT WITH CHECK (role_name = current_user);
CREATE POLICY own_update ON intendant.machines FOR UPDATE
  USING (role_name = current_user) WITH CHECK (role_name = current_user);

ALTER TABLE intendant.sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON intendant.sessions FOR SELECT USING (true);
CREATE POLICY own_insert ON intendant.sessions FOR INSERT
  WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_update ON intendant.sessions FOR UPDATE
  USING (intendant.owns_machine(machine)) WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_delete ON intendant.sessions FOR DELETE USING (intendant.owns_machine(machine));

ALTER TABLE intendant.records ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON intendant.records FOR SELECT USING (true);
CREATE POLICY own_insert ON intendant.records FOR INSERT
  WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_update ON intendant.records FOR UPDATE
  USING (intendant.owns_machine(machine)) WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_delete ON intendant.records FOR DELETE USING (intendant.owns_machine(machine));

ALTER TABLE intendant.batches ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON intendant.batches FOR SELECT USING (true);
CREATE POLICY own_insert ON intendant.batches FOR INSERT
  WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_delete ON intendant.batches FOR DELETE USING (intendant.owns_machine(machine));

ALTER TABLE intendant.tombstones ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON intendant.tombstones FOR SELECT USING (true);
CREATE POLICY own_insert ON intendant.tombstones FOR INSERT
  WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_update ON intendant.tombstones FOR UPDATE
  USING (intendant.owns_machine(machine)) WITH CHECK (intendant.owns_machine(machine));
CREATE POLICY own_delete ON intendant.tombstones FOR DELETE
  USING (intendant.owns_machine(machine));

`;

/**
 * Privileges of the publisher group role at schema version 1 (kept as history: an upgrade
 * test builds a version-1 database with them). Version 2's are PUBLISHER_GRANTS_SQL.
 */
export const PUBLISHER_GRANTS_V1_SQL = `
GRANT USAGE ON SCHEMA intendant TO intendant_publisher;
GRANT SELECT ON ALL TABLES IN SCHEMA intendant TO intendant_publisher;
GRANT INSERT, UPDATE ON intendant.machines TO intendant_publisher;
GRANT UPDATE ON intendant.team_state TO intendant_publisher;
GRANT INSERT, UPDATE, DELETE ON intendant.sessions, intendant.records, intendant.tombstones
  TO intendant_publisher;
GRANT INSERT, DELETE ON intendant.batches TO intendant_publisher;
GRANT EXECUTE ON FUNCTION intendant.owns_machine(text) TO intendant_publisher;
GRANT EXECUTE ON FUNCTION intendant.clean_pending() TO intendant_publisher;
`;
