/**
 * The bounded directory walker every source's discovery uses, and the ONE vocabulary for
 * what a walk refuses. Users read these words in coverage (ui/lib/skip_reasons.ts), so a
 * meaning has exactly one word:
 *  - "walk_truncated": a walk budget ran out; the entries past it were not visited;
 *  - "dir_unreadable": a directory exists but could not be listed (permission, I/O);
 *  - "not_a_regular_file": an entry named like a transcript that is a symlink, FIFO,
 *    directory or device (never opened, never followed);
 *  - "not_a_directory": an entry where a directory belongs that is not a real one
 *    (symlinked directories are never followed).
 * Invariants: a missing directory (NotFound / NotADirectory) is "not present", never
 * counted; listings are sorted by name so a cut walk cuts the same entries every time;
 * memory is bounded by the budget (entries past it are counted, not kept).
 */
import { countSkip } from "./types.ts";

/** The walk vocabulary (source-specific reasons stay plain strings in `skipped`). */
export type SkipReason =
  | "walk_truncated"
  | "dir_unreadable"
  | "not_a_regular_file"
  | "not_a_directory";

/** How many entries a walk may still visit; `cut` once one was refused. */
export interface WalkBudget {
  left: number;
  cut: boolean;
}

/**
 * How a spent budget is counted as "walk_truncated": "each" entry refused, "once" (the
 * first refusal; the listing stops), or "none" (the caller counts, e.g. once per home).
 */
export type CutCounting = "each" | "once" | "none";

/** A budget of `max` entries. RangeError unless `max` is a positive safe integer. */
export function createWalkBudget(max: number): WalkBudget {
  if (!Number.isSafeInteger(max) || max <= 0) {
    throw new RangeError(`Walk budget must be a positive integer: got ${max}`);
  }
  return { left: max, cut: false };
}

/** Takes one entry from `budget`; false (counted per `counting`) when it is spent. */
export function spendBudget(
  budget: WalkBudget,
  skipped: Record<string, number>,
  counting: CutCounting = "each",
): boolean {
  if (budget.left > 0) {
    budget.left--;
    return true;
  }
  if (counting === "each" || (counting === "once" && !budget.cut)) {
    countSkip(skipped, "walk_truncated" satisfies SkipReason);
  }
  budget.cut = true;
  return false;
}

/** Options for {@link listDirBounded}. */
export interface ListDirOptions {
  /** Shared across the walk; absent: unbounded listing. */
  budget?: WalkBudget;
  skipped: Record<string, number>;
  /** @default "each" */
  counting?: CutCounting;
  /**
   * Which listing errors are counted as "dir_unreadable": "permission" (PermissionDenied
   * only; anything else propagates) or "any" Error. @default "permission"
   */
  unreadable?: "permission" | "any";
}

/**
 * The entries of `dir`, sorted by name; null when it is missing or unreadable (counted).
 * With "once" counting the listing stops at the first refused entry and counts that
 * listing once; with "each" every refused entry is counted (and not kept); with "none" it
 * stops uncounted (the caller reads `budget.cut`).
 */
export async function listDirBounded(
  dir: string,
  o: ListDirOptions,
): Promise<Deno.DirEntry[] | null> {
  const { budget, skipped, counting = "each", unreadable = "permission" } = o;
  const out: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (budget && !spendBudget(budget, skipped, counting === "each" ? "each" : "none")) {
        if (counting === "each") continue;
        // "once" is once per listing: each listing a spent budget cuts says so.
        if (counting === "once") countSkip(skipped, "walk_truncated" satisfies SkipReason);
        break;
      }
      out.push(e);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    // One unreadable directory must not hide every other session.
    const counted = unreadable === "any"
      ? err instanceof Error
      : err instanceof Deno.errors.PermissionDenied;
    if (!counted) throw err;
    countSkip(skipped, "dir_unreadable" satisfies SkipReason);
    return null;
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
