/**
 * Skip reasons in plain words. The extractors count skipped input by reason code (a fixed
 * vocabulary per extractor, `discovery:` prefixed when the file walk found it); the
 * coverage table shows a phrase a user can act on and keeps the code in a tooltip for bug
 * reports. Figures are the extractors' limits (record.ts, cursor.ts, kimi_limits.ts); a
 * code several sources count under different limits (oversized_line: 16 MiB for Copilot,
 * Cursor and Droid, 32 MiB for Gemini and Qwen, 64 MiB for the shared reader) names none.
 * A code without a phrase (a newer extractor) is shown with its underscores as spaces.
 * Pure.
 */

const PHRASES: Record<string, string> = {
  // Reads of transcript lines.
  malformed_line: "unreadable lines",
  malformed_record: "unreadable records",
  malformed_entry: "unreadable entries",
  oversized_line: "lines over the source's line-size limit",
  invalid_utf8: "lines that are not UTF-8",
  blank_line: "blank lines",
  bad_timestamp: "lines without a valid time",
  no_uuid: "messages without an id",
  bad_uuid: "messages with a bad id",
  duplicate_uuid: "repeated messages",
  extra_header: "repeated session headers",
  bad_payload: "unreadable payloads",
  bad_message_row: "unreadable messages",
  bad_user_message: "unreadable user messages",
  bad_assistant_message: "unreadable assistant messages",
  bad_epoch_mapping: "rewritten history that could not be matched",
  sidecar_unreadable: "message text files that could not be read",
  wrapper_session: "wrapper sessions (their inner session is indexed)",
  header_invalid: "transcripts with an unreadable header",
  header_pending: "transcripts still being started (no header yet)",
  legacy_twin: "old JSON copies of JSONL transcripts",
  legacy_json_unparsable: "unreadable old JSON transcripts",
  vanished: "files that disappeared while being read",
  too_many_messages: "sessions with too many messages",
  too_many_records: "sessions with too many records",
  // Copilot CLI's rewritten files (the whole file is read again; nothing is lost).
  partial_read: "files read again after a partial read",
  window_invalid: "files read again after a rewrite",
  cut_below_window: "files read again after a rewrite",
  history_changed: "files read again after a rewrite",
  id_reused: "files read again after a rewrite",
  // SQLite stores (OpenCode, Goose).
  db_busy: "databases busy with a writer (read on the next sweep)",
  db_corrupt: "damaged databases",
  db_schema: "databases in an unknown layout",
  db_error: "databases that could not be read",
  db_missing: "databases that disappeared",
  db_not_sqlite: "files that are not SQLite databases",
  db_refused: "databases refused (links or special files)",
  db_too_large: "databases too large to copy",
  db_unreadable: "databases without read permission",
  db_empty: "empty database files (0 bytes)",
  db_hostile: "databases refused as hostile (views or generated columns where tables belong)",
  db_sessions_truncated: "sessions past the per-database listing cap",
  duplicate_session_in_another_db: "copies of a session in another database (the live one is read)",
  message_invalid: "unreadable messages",
  part_invalid: "unreadable message parts",
  content_invalid: "unreadable message content",
  session_invalid: "unreadable session files",
  unexplained_branch: "branches no rewind explains (kept, marked rewound)",
  // Codex, Claude Code, Kimi, Pi and native words the scan of the extractors found.
  bad_rollback: "rollbacks that could not be applied",
  torn_tail: "unfinished ends of compressed transcripts",
  symlinked_dir: "linked folders (not followed)",
  bad_rewound_row: "rewind records that could not be read",
  header_without_id: "session headers without an id",
  sidechain_unreadable: "sub-agent transcripts that could not be read",
  sidechain_session_unknown: "sub-agent transcripts of an unknown session",
  file_vanished: "files that disappeared while being read",
  replayed_from_other_session: "history copied in by a resume (indexed with its own session)",
  bad_session_name: "session folders with unexpected names",
  wire_outside_agent_dir: "transcripts outside an agent folder",
  bad_agent_dir: "agent folders with unexpected names",
  // Whole sessions a bound keeps out (Kimi Code).
  oversized_record: "sessions with a record over 2 MiB",
  oversized_wire: "sessions with a transcript over 64 MiB",
  oversized_session: "sessions over 128 MiB",
  oversized_state_json: "sessions with a state file over 2 MiB",
  too_many_wire_records: "sessions over 200,000 records",
  too_many_agents: "sessions with over 256 agents",
  path_too_long: "paths too long",
  // The file walk.
  symlink: "symbolic links (not followed)",
  not_a_regular_file: "links and special files (not followed)",
  not_a_directory: "files where a folder was expected",
  not_a_session_dir: "folders that are not sessions",
  hardlink_twin: "hard-linked copies",
  hardlinked: "hard links in session folders (never read: they may name a file outside)",
  permission_denied: "files without read permission",
  dir_unreadable: "folders that could not be read",
  unreadable: "files that could not be read",
  unexpected_name: "files with unexpected names",
  backup_sibling: "backup copies",
  duplicate_session_id: "sessions found twice",
  duplicate_thread: "sessions found twice",
  duplicate_main_transcript: "sessions found twice",
  walk_truncated: "entries past the walk limit",
  beyond_newest_sessions: "sessions older than the newest 2,000",
  zst_too_large: "compressed transcripts over 256 MiB",
  zst_corrupt: "damaged compressed transcripts",
  zst_shadowed_by_plain: "compressed copies of plain transcripts",
  file_too_large: "files too large",
  harness_agent: "harness agents",
  no_thread_id: "transcripts without a session id",
  malformed_state_json: "unreadable session state files",
  state_json_not_regular: "session state files that are links",
};

/** A plain phrase for a skip reason code (with or without the `discovery:` prefix). */
export function skipReasonText(code: string): string {
  const bare = code.startsWith("discovery:") ? code.slice("discovery:".length) : code;
  return PHRASES[bare] ?? bare.replaceAll("_", " ");
}
