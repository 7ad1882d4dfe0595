package ipaccess

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// ClientAddr finds the address of the client of the request whose context it is given; false
// when it is not known (server.ClientAddr).
type ClientAddr func(ctx context.Context) (netip.Addr, bool)

// Guard enforces the teams' IP access settings. It keeps each team's enabled ranges in memory
// for auth.CacheTTL, as the key cache keeps keys, so that the check of a request reads no
// database: a change through this server applies to the next request (Forget), a change through
// another replica within auth.CacheTTL.
type Guard struct {
	db         *db.DB
	clientAddr ClientAddr

	mu    sync.RWMutex
	cache map[int64]cachedRanges
}

type cachedRanges struct {
	ranges  []netip.Prefix
	expires time.Time
}

// cacheLimit bounds the teams whose ranges are kept at once.
const cacheLimit = 10000

// NewGuard returns a guard that reads the settings from database and the client's address with
// clientAddr.
func NewGuard(database *db.DB, clientAddr ClientAddr) *Guard {
	return &Guard{db: database, clientAddr: clientAddr, cache: make(map[int64]cachedRanges)}
}

// Check refuses a request made with a key of the team when the team has enabled ranges and the
// request's client address is in none of them.
//
// Errors: Forbidden naming the address (or saying it is unknown); anything else is a database
// failure.
func (g *Guard) Check(ctx context.Context, teamID int64) error {
	ranges, err := g.ranges(ctx, teamID)
	if err != nil || len(ranges) == 0 {
		return err
	}
	addr, ok := g.clientAddr(ctx)
	if allows(ranges, addr, ok) {
		return nil
	}
	if !ok {
		return apierror.Forbiddenf("IP access: the team accepts its keys only from its allowed address ranges, and this request's address is unknown")
	}
	return apierror.Forbiddenf("IP access: the team accepts its keys only from its allowed address ranges, and %s is in none of them", addr)
}

// ranges returns the team's enabled ranges, from the cache while it is fresh.
func (g *Guard) ranges(ctx context.Context, teamID int64) ([]netip.Prefix, error) {
	now := time.Now()
	g.mu.RLock()
	entry, ok := g.cache[teamID]
	g.mu.RUnlock()
	if ok && now.Before(entry.expires) {
		return entry.ranges, nil
	}
	s, err := load(ctx, g.db.Read(), teamID)
	if err != nil {
		return nil, err
	}
	ranges := enabledRanges(s.Entries)
	g.mu.Lock()
	if len(g.cache) >= cacheLimit {
		clear(g.cache)
	}
	g.cache[teamID] = cachedRanges{ranges: ranges, expires: now.Add(auth.CacheTTL)}
	g.mu.Unlock()
	return ranges, nil
}

// Forget drops the team's cached ranges, so that a change made through this server applies to
// the very next request.
func (g *Guard) Forget(teamID int64) {
	g.mu.Lock()
	delete(g.cache, teamID)
	g.mu.Unlock()
}

// checkLockout refuses settings whose enabled ranges leave out the caller's own address, unless
// accepted.
//
// Errors: Invalid naming the caller's address and acceptLockout.
func (g *Guard) checkLockout(ctx context.Context, entries []Entry, accepted bool) error {
	if accepted {
		return nil
	}
	addr, ok := g.clientAddr(ctx)
	if allows(enabledRanges(entries), addr, ok) {
		return nil
	}
	if !ok {
		return apierror.Invalidf("ipAccess: this request's address is unknown, so the enabled ranges would refuse it; send acceptLockout=true to store them anyway")
	}
	return apierror.Invalidf("ipAccess: no enabled range holds this request's address %s, so the team's keys would be refused from here on; add a range that holds it, or send acceptLockout=true to store them anyway", addr)
}
