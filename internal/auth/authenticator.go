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

	// owner tells what the owner of a personal key may do now (see SetOwnerAccess).
	owner OwnerAccessFunc
}

// OwnerAccess is what the owner of a personal key (owner.userId) may do now.
type OwnerAccess struct {
	// Member is false when the team has no member of that id.
	Member bool
	// Active is false for a revoked member, or one whose temporary access has expired.
	Active bool
	// Permissions are the union of the permissions of the member's groups' roles, by public name.
	Permissions []string
	// TeamHasMembers is false when the team has no member at all: its personal keys then keep
	// their own permissions (the rule for teams that existed before members did).
	TeamHasMembers bool
}

// OwnerAccessFunc reads, in q, what the team's member userID may do now.
type OwnerAccessFunc func(ctx context.Context, q db.Querier, teamID int64, userID string) (OwnerAccess, error)

// SetOwnerAccess installs the function that tells what a personal key's owner may do. Call it
// before the first request; without it, personal keys keep their own permissions.
func (a *Authenticator) SetOwnerAccess(f OwnerAccessFunc) { a.owner = f }

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
		ownerJSON              string
	)
	err := a.db.Read().QueryRowContext(ctx,
		`SELECT id, team_id, name, active, permissions, presets, access_policy, kind, owner
		   FROM api_keys WHERE value_hash = $1`, hash).
		Scan(&p.KeyID, &p.TeamID, &p.KeyName, &active, &permsJSON, &presetsJSON, &policyText, &kind, &ownerJSON)
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
	var owner struct {
		UserID string `json:"userId"`
	}
	if err := json.Unmarshal([]byte(ownerJSON), &owner); err != nil {
		return nil, fmt.Errorf("key %s owner: %w", p.KeyID, err)
	}
	if owner.UserID != "" && a.owner != nil {
		if err := a.narrowToOwner(ctx, &p, owner.UserID); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// ErrOwnerRevoked is Authenticate's answer for a personal key whose owner is revoked or whose
// temporary access has expired (an apierror.Unauthenticated).
var ErrOwnerRevoked = apierror.Unauthenticatedf("Authorization: the API key's owner is not an active member of the team")

// narrowToOwner makes a personal key hold at most what its owner may do now: the permissions it
// holds and its owner's groups' roles grant. A revoked owner stops the key (ErrOwnerRevoked); an
// owner the team does not have leaves the key no permission, unless the team has no member at
// all, where the key keeps its own (docs/decisions.md, issue 34).
func (a *Authenticator) narrowToOwner(ctx context.Context, p *Principal, userID string) error {
	access, err := a.owner(ctx, a.db.Read(), p.TeamID, userID)
	if err != nil {
		return fmt.Errorf("key %s owner: %w", p.KeyID, err)
	}
	switch {
	case !access.TeamHasMembers:
		return nil
	case !access.Member:
		clear(p.permissions)
		return nil
	case !access.Active:
		return ErrOwnerRevoked
	}
	p.UserID = userID
	allowed := make(map[string]bool, len(access.Permissions))
	for _, name := range access.Permissions {
		allowed[name] = true
	}
	for name := range p.permissions {
		if !allowed[name] {
			delete(p.permissions, name)
		}
	}
	return nil
}

// ForgetTeam drops every cached lookup of the team's keys, so that a change of who may do what in
// the team (a member revoked, a group's role or members changed, the team deleted) applies to
// the very next request on this server.
func (a *Authenticator) ForgetTeam(teamID int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for hash, entry := range a.cache {
		if entry.principal.TeamID == teamID {
			delete(a.cache, hash)
		}
	}
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
