/**
 * What looks like a credential or personal identifier: one detector shared by the agent spec route
 * (redacting env values) and memory (exclude_sensitive keeps such facts out of memory, issue 23).
 */

/** Key names that say "credential" (API_KEY, DB_PASSWORD, GITHUB_TOKEN, CLIENT_SECRET, AUTH_HEADER, …). */
const SECRET_KEY_RE = /(^|_)(KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|PASS|CREDENTIALS?|AUTH|AUTHORIZATION|PRIVATE|SIGNING|DSN|COOKIE|SESSION)(_|$)/i;
const PEM_RE = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
/**
 * Values that are credentials whatever their key: provider key prefixes (OpenAI sk-, GitHub ghp_/gho_/
 * github_pat_, Slack xox?-, AWS AKIA/ASIA, Google AIza, Stripe sk_live_/rk_live_), PEM blocks, JWTs,
 * URLs with a password (scheme://user:pass@host), and the platform's own key prefixes.
 */
const SECRET_VALUE_RES = [
  /^sk-[A-Za-z0-9_-]{16,}/,
  /^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/,
  /^github_pat_[A-Za-z0-9_]{20,}/,
  /^xox[abposr]-[A-Za-z0-9-]{10,}/,
  /^(AKIA|ASIA)[A-Z0-9]{16}$/,
  /^AIza[0-9A-Za-z_-]{30,}/,
  /^(sk|rk)_(live|test)_[A-Za-z0-9]{16,}/,
  PEM_RE,
  /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/,
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i,
  /^(pk|svc|wk)_[A-Za-z0-9]{20,}/,
];

/** An env entry whose key or value says credential (the spec route's redaction). */
export function looksSecret(key: string, value: string): boolean {
  return SECRET_KEY_RE.test(key) || SECRET_VALUE_RES.some((re) => re.test(value));
}

const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
/** 13 to 19 digits, optionally grouped by spaces or dashes: a payment card when the Luhn sum holds. */
const CARD_RE = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
/** A credential named and then given: "my password is hunter2", "api key: abc", "PIN = 1234". */
const NAMED_CREDENTIAL_RE =
  /\b(password|passwd|passphrase|passcode|pin|pin code|api[ _-]?key|access[ _-]?key|secret[ _-]?key|private[ _-]?key|token|secret|cvv|cvc|iban|ssn|social security number)\s*(is|was|:|=)\s*\S+/i;
/** A long opaque token mixing letters and digits (a key with an unknown prefix). */
const OPAQUE_TOKEN_RE = /^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9_+/=-]{32,}$/;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let n = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
    sum += n;
  }
  return sum % 10 === 0;
}

/**
 * Whether free text holds something that must not be remembered: a word that is a credential by
 * its shape (the value rules above, or KEY=value with a credential key), a long opaque token, a
 * named credential with its value, an email address, or a payment card number (Luhn-checked).
 */
export function looksSensitive(text: string): boolean {
  if (EMAIL_RE.test(text) || NAMED_CREDENTIAL_RE.test(text) || PEM_RE.test(text)) return true;
  for (const m of text.matchAll(CARD_RE)) if (luhn(m[0].replace(/[ -]/g, ''))) return true;
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(/^["'([{<]+|["')\]}>,;:.!?]+$/g, '');
    if (!word) continue;
    const eq = word.indexOf('=');
    if (eq > 0 && eq < word.length - 1 && looksSecret(word.slice(0, eq), word.slice(eq + 1))) return true;
    if (SECRET_VALUE_RES.some((re) => re.test(word)) || OPAQUE_TOKEN_RE.test(word)) return true;
  }
  return false;
}
