/**
 * The source table: one row per source (id, display name, colour, resume command, home
 * and its environment override, transcript subdirectories). The UI labels and badge
 * colours, the catalog's resume commands, the configuration's agent-home overrides, the
 * permission profile and lease staging read their per-source facts here, so a new source
 * is one folder under extract/, one fixture writer and one row.
 * Invariants: a row for every id in SOURCES (the Record type enforces it); this module
 * imports types and the import-free home rules (lib/source_homes.ts) only, so the UI
 * bundle may import it without pulling server code in.
 * Resume forms of the original five, and why:
 *  - intendant: `intendant run --resume <id> "…"`: our CLI takes the new task as the
 *    positional argument; "…" marks where it goes (spec "Resume and Rehydration").
 *  - codex: `codex resume <thread-id>`: Codex finds the rollout by thread id from anywhere.
 *  - claude-code: `cd <project> && claude --resume <uuid>`: `--resume <id>` only searches
 *    the current project's sessions, so the command starts in the session's project.
 *  - kimi: `cd <project> && kimi --session <id>`: Kimi buckets sessions by working
 *    directory; an unknown id in the wrong directory silently starts a NEW session.
 *  - pi: `pi --session <path>`: Pi's `--session` takes the session FILE.
 * The seven issue-17 rows carry the forms formats-more.md names, checked against each
 * tool's own documentation (geminicli.com "Session Management": `--resume <uuid>` among
 * the current project's sessions; Factory's CLI reference: `droid --resume [sessionId]`;
 * Goose's CLI reference: `goose session --resume --session-id <id>`, alias `--id`).
 * Where each source's home is and which variables move it: lib/source_homes.ts (the
 * rows' `home`), shared with the configuration and the permission profile.
 */
import type { ResumeFacts, SourceRow } from "./extract/mod.ts";
import type { Source } from "./record.ts";
import { SOURCE_HOME_RULES as H } from "../source_homes.ts";

const cdOf = (f: ResumeFacts, q: (s: string) => string) =>
  f.project ? `cd ${q(f.project)} && ` : "";

/** Every source's row, keyed by id, in SOURCES order. */
export const SOURCE_TABLE: Readonly<Record<Source, SourceRow>> = {
  intendant: {
    id: "intendant",
    label: "Intendant",
    colour: { light: "#6d28d9", dark: "#c4b5fd" },
    resume: (f, q) => `intendant run --resume ${q(f.sessionId)} "…"`,
    home: null,
    transcriptSubdirs: [],
    keep: {
      kind: "state_root",
      restore:
        "its sessions live in the state root already (`intendant trash` and `intendant restore` bring a deleted one back)",
    },
  },
  codex: {
    id: "codex",
    label: "Codex",
    colour: { light: "#047857", dark: "#6ee7b7" },
    resume: (f, q) => `codex resume ${q(f.sessionId)}`,
    home: H.codex,
    transcriptSubdirs: ["sessions", "archived_sessions"],
    keep: {
      kind: "files",
      restore:
        "the rollout returns to its dated folder under sessions/; Codex builds that keep a thread index (state_5.sqlite, table threads) list only rollouts that have a row there, and Intendant never writes that database: a restored rollout whose row was deleted is on disk and searchable, but such a build may not list it in `codex resume`",
    },
  },
  "claude-code": {
    id: "claude-code",
    label: "Claude Code",
    colour: { light: "#c2410c", dark: "#fdba74" },
    resume: (f, q) => `${cdOf(f, q)}claude --resume ${q(f.sessionId)}`,
    home: H["claude-code"],
    transcriptSubdirs: ["projects"],
    keep: {
      kind: "files",
      restore:
        "the transcript returns to projects/<encoded project directory>/<id>.jsonl, its subagent files beside it; `claude --resume <id>` run in the project lists it again",
    },
  },
  kimi: {
    id: "kimi",
    label: "Kimi",
    colour: { light: "#1d4ed8", dark: "#93c5fd" },
    resume: (f, q) => `${cdOf(f, q)}kimi --session ${q(f.sessionId)}`,
    home: H.kimi,
    transcriptSubdirs: ["sessions"],
    keep: {
      kind: "files",
      restore: "the wire file returns to its session folder, the bucket of its working directory",
    },
  },
  pi: {
    id: "pi",
    label: "Pi",
    colour: { light: "#be185d", dark: "#f9a8d4" },
    resume: (f, q) => {
      const file = f.files.find((p) => p.endsWith(".jsonl")) ?? f.files[0];
      // Without a known file Pi can still pick the session interactively (`pi --resume`).
      return file ? `pi --session ${q(file)}` : "pi --resume";
    },
    home: H.pi,
    transcriptSubdirs: ["sessions"],
    keep: {
      kind: "files",
      restore: "the session file returns to its place; `pi --session <file>` opens it",
    },
  },
  gemini: {
    id: "gemini",
    label: "Gemini CLI",
    colour: { light: "#0e7490", dark: "#67e8f9" },
    // Gemini resumes by session id among the current project's sessions.
    resume: (f, q) => `${cdOf(f, q)}gemini --resume ${q(f.sessionId)}`,
    // GEMINI_CLI_HOME replaces $HOME (formats-more §1.1): the agent home is `<it>/.gemini`.
    home: H.gemini,
    transcriptSubdirs: ["tmp"],
    keep: {
      kind: "files",
      restore: "the session file returns to its project folder under tmp/",
    },
  },
  qwen: {
    id: "qwen",
    label: "Qwen Code",
    colour: { light: "#7c3aed", dark: "#ddd6fe" },
    resume: (f, q) => `${cdOf(f, q)}qwen --resume ${q(f.sessionId)}`,
    home: H.qwen,
    transcriptSubdirs: ["projects"],
    keep: {
      kind: "files",
      restore: "the session file returns to its project folder",
    },
  },
  copilot: {
    id: "copilot",
    label: "Copilot CLI",
    colour: { light: "#374151", dark: "#d1d5db" },
    resume: (f, q) => `copilot --resume ${q(f.sessionId)}`,
    home: H.copilot,
    transcriptSubdirs: ["session-state"],
    keep: {
      kind: "files",
      restore: "the events file returns to its session-state folder",
    },
  },
  cursor: {
    id: "cursor",
    label: "Cursor CLI",
    colour: { light: "#4b5563", dark: "#e5e7eb" },
    // The chat id is the transcript's file stem (formats-more §4.4).
    resume: (f, q) => `${cdOf(f, q)}cursor-agent --resume ${q(f.sessionId)}`,
    home: H.cursor,
    transcriptSubdirs: ["projects", "chats"],
    keep: {
      kind: "files",
      restore:
        "the transcript returns to its project folder (the chats/ store databases are not kept)",
    },
  },
  droid: {
    id: "droid",
    label: "Factory Droid",
    colour: { light: "#a16207", dark: "#fde047" },
    resume: (f, q) => `${cdOf(f, q)}droid --resume ${q(f.sessionId)}`,
    // No environment override is known (formats-more §5.1): HOME alone moves it.
    home: H.droid,
    transcriptSubdirs: ["sessions", "projects"],
    keep: {
      kind: "files",
      restore: "the session file returns to its folder",
    },
  },
  opencode: {
    id: "opencode",
    label: "OpenCode",
    colour: { light: "#0f766e", dark: "#5eead4" },
    resume: (f, q) => `${cdOf(f, q)}opencode --session ${q(f.sessionId)}`,
    home: H.opencode,
    transcriptSubdirs: ["storage"],
    keep: {
      kind: "database",
      restore:
        "sessions are rows of opencode.db: an export of each session's rows (session, messages, parts, todos) is kept; a database cannot be restored file by file, so `vault restore --to DIR` writes the export (opencode-<id>.json) and nothing is written back into opencode.db (sessions only in the legacy storage/ tree are not kept)",
    },
  },
  goose: {
    id: "goose",
    label: "Goose",
    colour: { light: "#b45309", dark: "#fcd34d" },
    resume: (f, q) => `goose session --resume --session-id ${q(f.sessionId)}`,
    home: H.goose,
    transcriptSubdirs: ["sessions"],
    keep: {
      kind: "database",
      restore:
        "sessions are rows of sessions.db: an export of each session's rows (session, messages) is kept; a database cannot be restored file by file, so `vault restore --to DIR` writes the export (goose-<id>.json) and nothing is written back into sessions.db (legacy sessions/<name>.jsonl files are not kept)",
    },
  },
};

/** The row of `source`. */
export function sourceRow(source: Source): SourceRow {
  return SOURCE_TABLE[source];
}
