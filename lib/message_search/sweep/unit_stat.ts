/**
 * Cheap facts about a session unit's files, from one lstat each (no file is opened): the
 * signature the indexer's publishes-nothing cache compares, each file's mtime (the
 * window cut), the bytes a full read would take (the pool's routing), and whether a set
 * of changed paths touches the unit (a watched sweep's filter).
 */
import { dirname } from "node:path";
import { statSource } from "../cursor.ts";
import type { SessionUnit } from "../extract/mod.ts";
import type { UnitResult } from "../pool/mod.ts";

/** dev:ino:mtime:size of each file, the mtimes and the bytes to read. */
export async function filesStat(
  unit: SessionUnit,
): Promise<{ sig: string; mtimes: number[]; bytes: number }> {
  const parts: string[] = [];
  const mtimes: number[] = [];
  let bytes = 0;
  for (const f of unit.files) {
    const st = await statSource(f.path);
    parts.push(st ? `${st.dev}:${st.ino}:${st.mtime_ms ?? 0}:${st.size}` : "gone:0:0:0");
    mtimes.push(st ? st.mtime_ms ?? 0 : 0);
    bytes += st?.size ?? 0;
  }
  return { sig: parts.join("|"), mtimes, bytes };
}

/** The signature alone: cheap change detection for the publishes-nothing cache. */
export async function filesSignature(unit: SessionUnit): Promise<string> {
  return (await filesStat(unit)).sig;
}

/** The memory a unit's result holds until it is published: its segment bytes or records. */
export function resultBytes(r: UnitResult): number {
  if (r.kind !== "replace" && r.kind !== "append") return 0;
  // Handed-over records: about two bytes per unit of text plus their fields.
  return r.encoded?.bytes.byteLength ?? r.summary.textUnits * 2 + r.summary.records * 200;
}

/** SQLite side files: a change to one is a change to the database it belongs to. */
const SIDE_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

/**
 * True when a path in `changed` names one of the unit's files, a SQLite side file of one,
 * or a directory holding one (a directory created, renamed or removed as a whole: its
 * files' own events can be missed while the watch on it is being added).
 */
export function unitTouched(unit: SessionUnit, changed: ReadonlySet<string>): boolean {
  for (const f of unit.files) {
    if (changed.has(f.path)) return true;
    for (const s of SIDE_SUFFIXES) if (changed.has(f.path + s)) return true;
    let d = dirname(f.path);
    for (let up = dirname(d); d !== up; d = up, up = dirname(d)) {
      if (changed.has(d)) return true;
    }
  }
  return false;
}
