/**
 * The dashboard's "Mask secrets" preference: ON unless the user turned it off, remembered
 * in localStorage under MASK_PREF_KEY ("off" is the only stored value that turns it off,
 * so a missing, cleared or garbled entry means masked — failing safe). One module-level
 * value shared by every component, so flipping the switch re-renders every mounted view
 * at once; another tab of the same dashboard follows through the `storage` event. Where
 * storage is refused (privacy mode, a sandboxed frame) the switch still works for the
 * page's lifetime. The Markdown export ignores this preference: it is always masked.
 */
import { useEffect, useState } from "preact/hooks";

/** The localStorage key of the preference. */
export const MASK_PREF_KEY = "intendant.maskSecrets";

const listeners = new Set<(on: boolean) => void>();

function readStored(): boolean {
  try {
    return localStorage.getItem(MASK_PREF_KEY) !== "off";
  } catch {
    return true; // storage refused: the safe default (masked) holds
  }
}

let current = typeof localStorage === "undefined" ? true : readStored();

/** The preference now (true = secrets masked). */
export function maskSecretsOn(): boolean {
  return current;
}

/** Sets the preference, stores it, and re-renders every component that uses it. */
export function setMaskSecrets(on: boolean): void {
  current = on;
  try {
    if (on) localStorage.removeItem(MASK_PREF_KEY);
    else localStorage.setItem(MASK_PREF_KEY, "off");
  } catch {
    // Storage refused: not remembered across reloads, but applied to this page.
  }
  for (const l of listeners) l(on);
}

if (typeof addEventListener === "function") {
  addEventListener("storage", (e: StorageEvent) => {
    if (e.key !== MASK_PREF_KEY && e.key !== null) return;
    const on = readStored();
    if (on === current) return;
    current = on;
    for (const l of listeners) l(on);
  });
}

/** The preference, re-rendering the caller when it changes. */
export function useMaskSecrets(): boolean {
  const [on, setOn] = useState(current);
  useEffect(() => {
    listeners.add(setOn);
    setOn(current); // it may have changed between render and effect
    return () => void listeners.delete(setOn);
  }, []);
  return on;
}
