import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, len, opts, (e, k) => (e ? reject(e) : resolve(k))));

// scrypt at N=2^15, r=8: about 60 ms and 32 MiB per hash, OWASP's recommended floor. The test
// suite lowers the cost (PLATFORM_KDF_LOG2N, never below 2^10) because it signs in thousands of
// times; the hash string records N, so hashes of either cost verify.
const log2n = Math.max(10, Math.min(20, Number(process.env.PLATFORM_KDF_LOG2N) || 15));
const PARAMS = { N: 1 << log2n, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** Hash format: scrypt$N$r$p$salt$key (base64url), self-describing so parameters can rise later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [alg, n, r, p, salt, key] = stored.split('$');
  if (alg !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return timingSafeEqual(actual, expected);
}

/** A hash of a random password, spent on unknown accounts so login timing does not reveal them. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword(randomBytes(16).toString('hex')));

/** The password rule of spec 1 §4.2; returns the problem, or undefined when the password is acceptable. */
export function passwordProblem(password: string): string | undefined {
  // Characters are Unicode code points: "🔑" is one character though it is two UTF-16 units.
  if ([...password].length < 12) return 'password must be at least 12 characters';
  const classes = [/[A-Z]/, /[a-z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes < 3) return 'password must contain at least 3 of: upper-case letters, lower-case letters, numbers, symbols';
  return undefined;
}

/** A generated password that always satisfies the rule (all four classes, 20 characters). */
export function generatePassword(): string {
  const pick = (set: string) => set[randomBytes(1)[0]! % set.length]!;
  const sets = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789', '-_.!@#%+='];
  const chars = sets.map(pick);
  while (chars.length < 20) chars.push(pick(sets.join('')));
  // Fisher-Yates with crypto randomness so the class positions are not fixed.
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomBytes(1)[0]! % (i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}
