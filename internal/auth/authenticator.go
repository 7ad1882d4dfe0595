package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// CacheTTL is how long a key, once looked up, is trusted without asking the database again. It
// bounds how long a key deleted or changed through another replica keeps its old powers here.
const CacheTTL = 2 * time.Second

const cacheLimit = 10000

// Authenticator turns Authorization header values into principals.
type Authenticator struct {
	db  *db.DB
	now func() time.Time

	// cache is keyed by the key's SHA-256 digest, not its hex form, so that a request served from
	// the cache hashes its key and allocates nothing more.
	mu    sync.RWMutex
	cache map[[sha256.Size]byte]cachedKey
}

type cachedKey struct {
	principal *Principal
	expires   time.Time
}

// NewAuthenticator returns an authenticator that reads keys from database. now is the clock for
// cache expiry (time.Now when nil).
func NewAuthenticator(database *db.DB, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{db: database, now: now, cache: make(map[[sha256.Size]byte]cachedKey)}
}

// Authenticate returns the principal of the key in the header value.
//
// Errors: apierror.Unauthenticated when the header holds no key, or a key that is unknown,
// deleted or inactive; anything else is a database failure.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (*Principal, error) {
	value := KeyFromHeader(header)
	if value == "" {
		return nil, apierror.Unauthenticatedf("Authorization: an API key is required")
	}
	digest := sha256.Sum256([]byte(value))
	now := a.now()
	a.mu.RLock()
	entry, ok := a.cache[digest]
	a.mu.RUnlock()
	if ok && now.Before(entry.expires) {
		return entry.principal, nil
	}

	p, err := a.load(ctx, hex.EncodeToString(digest[:])) // HashKey(value)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if len(a.cache) >= cacheLimit {
		clear(a.cache)
	}
	a.cache[digest] = cachedKey{principal: p, expires: now.Add(CacheTTL)}
	a.mu.Unlock()
	return p, nil
}

// ErrDeactivated is Authenticate's answer for a deactivated key (an apierror.Unauthenticated),
// told apart from the other refusals by the metrics of refused requests.
var ErrDeactivated = apierror.Unauthenticatedf("Authorization: the API key is deactivated")

func (a *Authenticator) load(ctx context.Context, hash string) (*Principal, error) {
	var (
		p                      Principal
		active                 bool
		permsJSON, presetsJSON string
		policyText, kind       string
	)
	err := a.db.Read().QueryRowContext(ctx,
		`SELECT id, team_id, name, active, permissions, presets, access_policy, kind
		   FROM api_keys WHERE value_hash = $1`, hash).
		Scan(&p.KeyID, &p.TeamID, &p.KeyName, &active, &permsJSON, &presetsJSON, &policyText, &kind)
	if db.IsNotFound(err) {
		return nil, apierror.Unauthenticatedf("Authorization: the API key is not valid")
	}
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	if !active {
		return nil, ErrDeactivated
	}
	var perms, presetNames []string
	if err := json.Unmarshal([]byte(permsJSON), &perms); err != nil {
		return nil, fmt.Errorf("key %s permissions: %w", p.KeyID, err)
	}
	if err := json.Unmarshal([]byte(presetsJSON), &presetNames); err != nil {
		return nil, fmt.Errorf("key %s presets: %w", p.KeyID, err)
	}
	policy, err := ParseAccessPolicy("accessPolicy", policyText)
	if err != nil {
		return nil, fmt.Errorf("key %s stored access policy: %w", p.KeyID, err)
	}
	p.SendData = kind == KindSendData
	p.permissions = Effective(perms, presetNames, policy)
	return &p, nil
}

// Forget drops every cached lookup of the key, so that a change or deletion made through this
// server applies to the very next request.
func (a *Authenticator) Forget(keyID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for hash, entry := range a.cache {
		if entry.principal.KeyID == keyID {
			delete(a.cache, hash)
		}
	}
}
