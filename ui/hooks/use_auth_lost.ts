/**
 * Whether the daemon stopped accepting this page's cookie (the token was rotated, or the
 * cookie is gone): the server's token help from the first 401 (api_client.ts onAuthLost),
 * null while every request is authorized. Once set it stays set: only opening the current
 * link (a new cookie) helps, and that reloads the page.
 */
import { useEffect, useState } from "preact/hooks";
import { onAuthLost, type TokenHelp } from "../api_client.ts";

/** The token help, or null. */
export function useAuthLost(): TokenHelp | null {
  const [help, setHelp] = useState<TokenHelp | null>(null);
  useEffect(() => onAuthLost(setHelp), []);
  return help;
}
