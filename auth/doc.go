// Package auth verifies rankwire's JWTs and turns their claims into a Scope.
//
// It owns three things:
//
//   - the tenants' key file: ParseKeys and LoadKeys build an immutable Keyring of
//     per-tenant verification keys (HS256 secrets; RS256, ES256 and EdDSA public
//     keys) and per-tenant Limits;
//   - token verification: a Verifier selects the key by the JWT header's kid, pins
//     the algorithm to that key's, requires tnt, exp and aud "rankwire", honours
//     exp, nbf and iat with Leeway, and refuses a token whose tnt is not the key's
//     tenant. Verifier.Swap replaces its Keyring while it serves (the gateway's
//     SIGHUP), and CompareKeys says which tenants and kids that adds and removes;
//   - keys published by identity providers: a tenant whose key file entry names a
//     jwks_url also verifies with the keys of that JSON Web Key Set, which
//     Verifier.RunJWKS fetches, refreshes and re-fetches on an unknown kid, keeping
//     the last good set while the provider fails (jwks.go, jwk.go);
//   - claims to scope: a Scope holds the tenant, subject, roles and board glob
//     patterns and answers Can, CanBoard and Allows.
//
// Mint and GenerateDemo sign tokens for the gateway's demo mode and for tests.
//
// The package imports only the standard library and github.com/golang-jwt/jwt/v5;
// it must not import board, identity, hub, subscriptions or api. Every value it
// builds is immutable after construction and safe for concurrent use, but for the
// Verifier, whose keys are one atomic pointer to an immutable state and whose
// cache of verified tokens has a lock of its own; verification never waits for a
// Swap.
//
// # Errors
//
// Every refusal of a token wraps ErrUnauthorized (HTTP 401, code "unauthorized";
// WebSocket close 4001 or 4003 as the api layer decides). Every refusal of an
// action by a valid token wraps ErrForbidden (HTTP 403, code "forbidden"). Key
// file problems wrap ErrKeyFile and are a *KeyFileError naming the tenant, kid
// and field. Messages are safe to send to clients: they never include a token,
// its signature or a secret.
package auth
