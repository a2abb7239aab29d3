/**
 * The secret rule set: one row per provider key format or generic credential shape.
 * Facts (prefixes, bodies' charsets and lengths) come from the maintained rule sets
 * secretlint's recommended preset and gitleaks' default config; the code is ours.
 * Each row: `id`, the `kind` label shown in masked text ("openai key"), lowercase
 * `keywords` (the cheap prefilter: the regex runs only when one occurs in the lowercased
 * text), a global regex with the `d` flag, the capture group holding the secret (0 = the
 * whole match), and a `valid` check that turns placeholders, hashes and prose away.
 * Provider keys start at a "key edge" — `(?<![A-Za-z0-9])`, not `\b`: a key glued after
 * `_` (`MY_TOKEN_ghp_…`, `export X_sk-proj-…`) is still a key (H3); after a letter or
 * digit it is part of a longer word and left alone.
 * Invariants: every regex has the `g` and `d` flags and no lookbehind-dependent state;
 * rows are in priority order (on equal spans the earlier row names the kind); every kind
 * appears in SECRET_KINDS.
 */
import {
  alnumClasses,
  charClasses,
  hasDigit,
  looksPlaceholderValue,
  looksReference,
  looksStructuralPlaceholder,
  shannonEntropy,
} from "./_checks.ts";

/** One rule of the set. */
export interface SecretRule {
  id: string;
  kind: string;
  keywords: readonly string[];
  re: RegExp;
  /** Capture group that holds the secret; 0 is the whole match. @default 0 */
  group?: number;
  /** Accept the candidate secret (the group's text); absent = accept. */
  valid?: (secret: string) => boolean;
}

/** A random-looking provider body: not a structural placeholder, enough entropy. */
function randomBody(minEntropy: number) {
  return (secret: string) =>
    !looksStructuralPlaceholder(secret) && shannonEntropy(secret) >= minEntropy;
}

/** Generic credential values: typed by people, so the word placeholder test applies. */
function passwordValue(v: string): boolean {
  if (v.length < 6 || looksPlaceholderValue(v)) return false;
  // PWD/OLDPWD in a pasted environment hold the working directory, not a password.
  if (/^[~.]{0,2}\//.test(v) || looksCode(v)) return false;
  // A password has a digit or a symbol next to letters; a bare word ("string", "required",
  // "hunter") is a type annotation or prose far more often than a password.
  if (!/[A-Za-z]/.test(v)) return v.length >= 8 && shannonEntropy(v) >= 2.5;
  return (hasDigit(v) || /[^A-Za-z0-9]/.test(v)) && shannonEntropy(v) >= 2.0;
}

/** A URL's password part, not a port and path nor a placeholder. */
function urlPassword(s: string): boolean {
  if (s.length < 3 || /^\d{1,5}(?:\/|$)/.test(s)) return false;
  return !looksPlaceholderValue(s) && !/^(pass(word)?|pwd)$/i.test(s);
}

/**
 * Code, not a value: a call, an index, a regex literal or a path, or a bare identifier
 * (`password = password_mgr`, `smtp.password = sim_auth`): letters and underscores only,
 * which a typed password almost never is. Measured on Python's standard library (22,431
 * 40-line chunks): these shapes were most of the password rule's false positives.
 */
function looksCode(v: string): boolean {
  return /[()[\]{}<>]/.test(v) || v.startsWith("/") || /^[A-Za-z_]+$/.test(v) && v.includes("_");
}

function tokenValue(v: string): boolean {
  // The word test is not needed here: "your_api_key_here" has no digit.
  if (v.length < 16 || looksStructuralPlaceholder(v) || looksReference(v)) return false;
  if (/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(v)) return false; // config.api.key
  // Code, not a value: a call, an index, a regex literal or a path (measured on this
  // repository's own sources: `const secret = utf8.decode(…)`, `TOKEN = /^[…]{32}$/`).
  if (/[()[\]{}<>]/.test(v) || v.startsWith("/")) return false;
  // Short hex is a hash or an id (a lookup table's `"AWS::IAM::AccessKey": "62d91b17…"`);
  // hex API keys are 32 characters and more.
  if (/^[0-9a-f]+$/i.test(v) && v.length < 32) return false;
  return charClasses(v) >= 2 && hasDigit(v) && shannonEntropy(v) >= 3.0;
}

function jwtValid(token: string): boolean {
  const head = token.split(".")[0] ?? "";
  try {
    const b64 = head.replace(/-/g, "+").replace(/_/g, "/");
    const json = JSON.parse(atob(b64 + "===".slice((b64.length + 3) % 4)));
    return typeof json === "object" && json !== null && ("alg" in json || "typ" in json);
  } catch (_e) {
    // Not base64url JSON: a lookalike, not a JWT.
    return false;
  }
}

function basicAuthValid(b64: string): boolean {
  try {
    const decoded = atob(b64);
    const colon = decoded.indexOf(":");
    const password = decoded.slice(colon + 1);
    return colon > 0 && password.length >= 4 && !looksStructuralPlaceholder(password) &&
      !looksReference(password);
  } catch (_e) {
    // Not base64: prose after "Basic".
    return false;
  }
}

// Generic key names: the word anywhere in the key, then up to 20 key characters; the separator is = : := => (JSON/YAML/env/shell/code). A `?:` (a
// TypeScript optional field) is not a separator.
// No prefix before the word: any key ending in it (DB_PASSWORD, clientSecret) matches at
// the word itself, and a leading part would stop the regex engine's literal scan.
const KEY_PREFIX = "";
// Quotes may come escaped (`\"`): a JSONL transcript holds the message as a JSON string.
const KEY_SUFFIX = String
  .raw`[A-Za-z0-9_.-]{0,20}(?:\\?["'])?[ \t]*(?:=>|:=|=|:)[ \t]*(?:\\?["'])?`;
// The value's last character is not closing punctuation: `pwd=None):` is the value
// `None` (a placeholder), closed by the call's `)` and the def's `:`.
const VALUE = String.raw`([^\s"'\`,;\\]{0,199}[^\s"'\`,;\\)\]}:.])`;

/** The rules, in priority order. */
export const SECRET_RULES: readonly SecretRule[] = [
  {
    id: "private-key",
    kind: "private key",
    keywords: ["private key"],
    // Through END when the text has it; else (a cut snippet, a truncated paste) through
    // the end of the base64 body so no key material is left showing. `\\n` covers the
    // escaped newlines of a GCP service-account JSON "private_key".
    re:
      /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=\s:,-]|\\n|\\r)*)/dg,
  },
  {
    id: "anthropic-key",
    kind: "anthropic key",
    keywords: ["sk-ant-"],
    re: /(?<![A-Za-z0-9])sk-ant-[a-z]{2,10}[0-9]{2}-[A-Za-z0-9_-]{32,}/dg,
    valid: randomBody(3.5),
  },
  {
    id: "openai-key",
    kind: "openai key",
    keywords: ["sk-"],
    // Project/service-account/admin keys and the legacy sk-<48>. The T3BlbkFJ marker
    // ("OpenAI" in base64) sits in most, but not all, issued keys, so it is not required.
    re:
      /(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin)-)?(?!ant-)[A-Za-z0-9_-]{32,200}(?![A-Za-z0-9_-])/dg,
    // Two of lower/upper/digit in the body: turns away lowercase prose and package
    // names after "sk-" (sk-learn-compatible-estimators).
    valid: (s) => alnumClasses(s.slice(3)) >= 2 && randomBody(3.5)(s),
  },
  {
    id: "github-token",
    kind: "github token",
    keywords: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
    re: /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36,255}\b/dg,
    valid: randomBody(3.0),
  },
  {
    id: "github-fine-grained-token",
    kind: "github token",
    keywords: ["github_pat_"],
    re: /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{82}\b/dg,
    valid: randomBody(3.0),
  },
  {
    id: "gitlab-token",
    kind: "gitlab token",
    keywords: ["glpat-"],
    re: /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])/dg,
    valid: randomBody(3.0),
  },
  {
    id: "aws-access-key-id",
    kind: "aws access key",
    keywords: ["akia", "asia", "abia", "acca", "a3t"],
    re: /(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/dg,
    valid: randomBody(2.5),
  },
  {
    id: "aws-secret-access-key",
    kind: "aws secret key",
    keywords: ["aws"],
    // 40 base64 characters near an AWS secret-key name (aws_secret_access_key,
    // AWS_SECRET, "SecretAccessKey"): bare 40-character base64 is too common to flag.
    re:
      /aws.{0,20}?(?:secret|sk|private).{0,20}?["'\\\s:=]+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
    group: 1,
    valid: (s) => alnumClasses(s) >= 2 && randomBody(4.0)(s),
  },
  {
    id: "slack-webhook",
    kind: "slack webhook",
    keywords: ["hooks.slack.com"],
    re:
      /(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/_-]{20,}/dg,
    valid: (s) => !looksStructuralPlaceholder(s),
  },
  {
    id: "slack-token",
    kind: "slack token",
    keywords: ["xox"],
    re: /(?<![A-Za-z0-9])xox[abprse]-(?:[0-9A-Za-z]{1,40}-){1,4}[0-9A-Za-z]{8,64}\b/dg,
    valid: (s) => hasDigit(s) && randomBody(3.0)(s),
  },
  {
    id: "stripe-key",
    kind: "stripe key",
    keywords: ["sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"],
    re: /(?<![A-Za-z0-9])[rs]k_(?:live|test|prod)_[A-Za-z0-9]{16,247}\b/dg,
    valid: randomBody(3.0),
  },
  {
    id: "gcp-api-key",
    kind: "gcp api key",
    keywords: ["aiza"],
    re: /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/dg,
    valid: randomBody(3.0),
  },
  {
    id: "gcp-oauth-client-secret",
    kind: "gcp oauth secret",
    keywords: ["gocspx-"],
    re: /(?<![A-Za-z0-9])GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])/dg,
    valid: randomBody(3.0),
  },
  {
    id: "npm-token",
    kind: "npm token",
    keywords: ["npm_"],
    re: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}\b/dg,
    valid: randomBody(3.0),
  },
  {
    id: "huggingface-token",
    kind: "huggingface token",
    keywords: ["hf_"],
    re: /(?<![A-Za-z0-9])hf_[A-Za-z]{34}\b/dg,
    valid: randomBody(3.5),
  },
  {
    id: "sendgrid-key",
    kind: "sendgrid key",
    keywords: ["sg."],
    re: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg,
    valid: randomBody(3.5),
  },
  {
    id: "jwt",
    kind: "jwt",
    keywords: ["eyj"],
    re: /(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/dg,
    valid: jwtValid,
  },
  {
    id: "bearer-token",
    kind: "bearer token",
    keywords: ["bearer"],
    re: /\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)/dgi,
    group: 1,
    // Not the generic placeholder test: a random token may hold dots (its member-access
    // test) or, by chance, a word; "Bearer YOUR_TOKEN" has no digit, "Bearer $T" is a
    // reference.
    valid: (s) =>
      !looksStructuralPlaceholder(s) && !looksReference(s) && hasDigit(s) &&
      shannonEntropy(s) >= 3.0,
  },
  {
    id: "basic-auth-header",
    kind: "basic auth",
    keywords: ["basic"],
    re: /\bauthorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})/dgi,
    group: 1,
    valid: basicAuthValid,
  },
  {
    id: "url-credentials",
    kind: "url password",
    keywords: ["://"],
    // scheme://user:password@host — the password alone is the secret, so the user name
    // and host stay readable. The user may be empty (`redis://:pw@host`, Redis' own form)
    // and the password may hold "/" (`mysql://root:ab/cd@db`); what is then a port and a
    // path (`http://host:8080/a@b`) is turned away by urlPassword.
    re: /\b[A-Za-z][A-Za-z0-9+.-]{1,20}:\/\/[^\s:@/]{0,64}:([^\s@]{1,128})@[A-Za-z0-9.-]+/dg,
    group: 1,
    valid: urlPassword,
  },
  {
    id: "generic-password",
    kind: "password",
    keywords: ["pass", "pwd"],
    re: new RegExp(
      KEY_PREFIX + String.raw`(?:password|passwd|passphrase|pwd)` + KEY_SUFFIX + VALUE,
      "dgi",
    ),
    group: 1,
    valid: passwordValue,
  },
  {
    id: "generic-secret",
    kind: "generic secret",
    keywords: ["secret", "token", "key", "credential"],
    re: new RegExp(
      KEY_PREFIX +
        String
          .raw`(?:secret|api[_-]?key|apikey|access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|credentials?|private[_-]?key)` +
        KEY_SUFFIX + VALUE,
      "dgi",
    ),
    group: 1,
    valid: tokenValue,
  },
];

/** The kinds the rule set knows, for docs and the audit. */
export const SECRET_KINDS: readonly { kind: string; description: string }[] = [
  {
    kind: "private key",
    description: "PEM private-key block (RSA, EC, OpenSSH, PGP, GCP service-account JSON)",
  },
  { kind: "anthropic key", description: "Anthropic API key (sk-ant-…)" },
  { kind: "openai key", description: "OpenAI API key (sk-…, sk-proj-…, sk-svcacct-…)" },
  { kind: "github token", description: "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)" },
  { kind: "gitlab token", description: "GitLab personal access token (glpat-…)" },
  { kind: "aws access key", description: "AWS access key id (AKIA…, ASIA…)" },
  { kind: "aws secret key", description: "AWS secret access key next to an AWS secret-key name" },
  { kind: "slack webhook", description: "Slack incoming webhook URL (hooks.slack.com/…)" },
  { kind: "slack token", description: "Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)" },
  {
    kind: "stripe key",
    description: "Stripe secret or restricted key (sk_live_, rk_live_, sk_test_)",
  },
  { kind: "gcp api key", description: "Google Cloud API key (AIza…)" },
  { kind: "gcp oauth secret", description: "Google OAuth client secret (GOCSPX-…)" },
  { kind: "npm token", description: "npm access token (npm_…)" },
  { kind: "huggingface token", description: "Hugging Face access token (hf_…)" },
  { kind: "sendgrid key", description: "SendGrid API key (SG.….…)" },
  { kind: "jwt", description: "JSON Web Token (eyJ….eyJ….signature)" },
  { kind: "bearer token", description: "Token after `Bearer` (an Authorization header)" },
  { kind: "basic auth", description: "Credentials of an `Authorization: Basic` header" },
  { kind: "url password", description: "Password in a URL (scheme://user:password@host)" },
  { kind: "password", description: "Value of a password/passwd/pwd assignment (=, :, =>)" },
  {
    kind: "generic secret",
    description: "High-entropy value of a secret/token/api_key assignment",
  },
];
