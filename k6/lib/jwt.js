// HS256 JWT minting for the k6 scripts, so a run can make its own tokens from
// the key file's secret instead of being handed them. Claims follow
// PROTOCOL.md, "Tokens": tnt and exp required, aud "rankwire", kid in the header.
import crypto from 'k6/crypto';
import encoding from 'k6/encoding';

// decodeSecret turns a key file's HS256 secret (base64, standard or URL-safe,
// padded or not, as the gateway accepts) into its bytes.
export function decodeSecret(secret) {
  const raw = secret.trim().replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  return encoding.b64decode(raw, 'rawstd');
}

// mintHS256 signs claims with the secret's bytes under kid. aud is always
// "rankwire"; iat is set to now; exp must be set by the caller.
export function mintHS256(secretBytes, kid, claims) {
  const header = { alg: 'HS256', typ: 'JWT', kid: kid };
  const body = Object.assign({ aud: 'rankwire', iat: Math.floor(Date.now() / 1000) }, claims);
  const signing = part(header) + '.' + part(body);
  return signing + '.' + crypto.hmac('sha256', secretBytes, signing, 'base64rawurl');
}

function part(obj) {
  return encoding.b64encode(JSON.stringify(obj), 'rawurl');
}
