package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// keyPrefix marks mgmtapi key values so that secret scanners and people can recognise them.
const keyPrefix = "mgmt_"

// NewKeyValue returns a fresh secret key value: the prefix and 32 random bytes, base64url.
func NewKeyValue() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("auth: the system random source failed: " + err.Error())
	}
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashKey returns the hex SHA-256 of a key value: what the database stores instead of the value.
// Keys carry 256 random bits, so a fast unsalted hash is enough to make a stolen table useless.
func HashKey(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// KeyFromHeader extracts the key from an Authorization header value, accepting both
// "Bearer <key>" (any case of "Bearer") and the bare key. It returns "" when there is none.
func KeyFromHeader(header string) string {
	header = strings.TrimSpace(header)
	if scheme, rest, ok := strings.Cut(header, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(rest)
	}
	return header
}

// SameSecret compares two secrets in time that does not depend on where they differ.
func SameSecret(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// The kinds of API key, as stored in api_keys.kind.
const (
	// KindAPI is a key for the management API.
	KindAPI = "api"
	// KindSendData is a send-data key: it authenticates only ingestion.
	KindSendData = "send-data"
)
