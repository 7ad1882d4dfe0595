package ipaccess

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the IP access settings' part of a team's configuration document
// (teamconfig.Area, teamconfig.Single): the body of CreateIpAccessSettings, the ranges as a list
// in their order, checked and stored as that operation does, the lockout check included (a
// document cannot accept a lockout: the operation's acceptLockout=true can). Every team has
// settings (the defaults when it set none); they are never deleted by prune.
type Configuration struct {
	// Guard is told of every change and finds the caller's address for the lockout check.
	Guard *Guard
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "ipAccess" }

// Single implements teamconfig.Single.
func (Configuration) Single() {}

// Permissions implements teamconfig.Area: those of GetIpAccessSettings and
// CreateIpAccessSettings.
func (Configuration) Permissions() (read, write string) {
	return "team-ip-access:ReadConfig", "team-ip-access:Manage"
}

// settingsID names the team's one settings object in a plan.
const settingsID = "settings"

// resource is s in the document's form.
func resource(s Settings) (teamconfig.Resource, error) {
	in := oas.IpAccessSettingsInput{
		EnablePlatformCustomerSupportAccess: oas.NewOptPlatformCustomerSupportAccess(oas.PlatformCustomerSupportAccess(s.SupportAccess)),
		IpAccess:                            make([]oas.IpAccessEntry, 0, len(s.Entries)),
	}
	for _, e := range s.Entries {
		entry := oas.IpAccessEntry{IpRange: oas.NewOptString(e.IPRange), Enabled: oas.NewOptBool(e.Enabled)}
		if e.Name != "" {
			entry.Name = oas.NewOptString(e.Name)
		}
		in.IpAccess = append(in.IpAccess, entry)
	}
	doc, err := in.MarshalJSON()
	return teamconfig.Resource{ID: settingsID, Doc: doc, Value: s}, err
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	s, err := load(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	r, err := resource(s)
	return []teamconfig.Resource{r}, err
}

// Prepare implements teamconfig.Area.
//
// Errors: those of the create's body and of checkEntries.
func (Configuration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in oas.IpAccessSettingsInput
	if err := teamconfig.DecodeBody(oas.CreateIpAccessSettingsOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	entries, err := checkEntries(in.IpAccess)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	return resource(Settings{SupportAccess: supportAccess(in.EnablePlatformCustomerSupportAccess), Entries: entries})
}

// Put implements teamconfig.Area.
//
// Errors: Invalid naming ipAccess when the enabled ranges leave out the caller's address.
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	s := r.Value.(Settings)
	if err := c.Guard.checkLockout(ctx, s.Entries, false); err != nil {
		return err
	}
	// Forgotten before the commit as well as after it (by the cache's age at worst): a request
	// between the two may see the old ranges for auth.CacheTTL.
	tx.BeforeCommit(func() error { c.Guard.Forget(teamID); return nil })
	return store(ctx, tx, teamID, s)
}

// Delete implements teamconfig.Area; settings are never deleted.
func (Configuration) Delete(context.Context, *db.Tx, int64, string) error { return nil }
