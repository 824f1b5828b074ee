package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestParserPinsAlgorithm checks the second line of defence against key
// confusion: even past keyFor's header check, a key's parser refuses any alg
// but the key's.
func TestParserPinsAlgorithm(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(priv.Public())
	pemText := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	file, _ := json.Marshal(map[string]any{"tenants": map[string]any{"t": map[string]any{
		"keys": []map[string]string{{"kid": "r", "alg": RS256, "public_key": string(pemText)}}}}})
	k, err := ParseKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	key := NewVerifier(k, Options{}).state.Load().keys["r"]
	forged := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"tnt": "t", "aud": Audience, "exp": time.Now().Add(time.Hour).Unix()})
	forged.Header["kid"] = "r"
	token, err := forged.SignedString(pemText)
	if err != nil {
		t.Fatal(err)
	}
	_, err = key.parser.ParseWithClaims(token, &claims{}, key.keyfunc)
	if !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
		t.Fatalf("parser accepted HS256 for an RS256 key: %v", err)
	}
	if got := refusal(err, &claims{}); !errors.Is(got, ErrBadSignature) {
		t.Errorf("refusal = %v, want ErrBadSignature", got)
	}
}

func TestRefusalDefaultsToMalformed(t *testing.T) {
	if err := refusal(errors.New("something new"), &claims{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("refusal = %v, want ErrMalformed", err)
	}
}
